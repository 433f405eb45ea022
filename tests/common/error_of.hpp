// The fstitch::Error a piece of code throws, for tests that look at its status and message.
#pragma once

#include <gtest/gtest.h>

#include "support/error.hpp"

namespace fstitch::testing {

// Runs `body` and returns the Error it throws (failing the test if it throws none).
template <class Body>
Error error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no fstitch::Error was thrown";
  return Error(StatusCode::kOk, "");
}

}  // namespace fstitch::testing
