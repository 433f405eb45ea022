// A context on the host backend for tests that run fusions through the C API.
#pragma once

#include <gtest/gtest.h>

#include "common/capi_handles.hpp"
#include "fstitch.h"

namespace fstitch::testing {

// Expects success; the handle is empty when the context could not be made.
inline ContextHandle host_backend_context(fst_log_level level = FST_LOG_WARN) {
  fst_context_options* raw_options = nullptr;
  EXPECT_EQ(fst_context_options_create(&raw_options), FST_OK);
  ContextOptionsHandle options(raw_options);
  EXPECT_EQ(fst_context_options_set_backend(options.get(), FST_BACKEND_HOST), FST_OK);
  EXPECT_EQ(fst_context_options_set_log_level(options.get(), level), FST_OK);
  fst_context* context = nullptr;
  EXPECT_EQ(fst_context_create(options.get(), &context), FST_OK) << fst_last_error_message();
  return ContextHandle(context);
}

}  // namespace fstitch::testing
