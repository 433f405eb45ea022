#include "contract.hpp"

#include <cstdio>
#include <cstdlib>

namespace fstitch::fuzz {

void violation(const std::string& what) {
  std::fprintf(stderr, "\n==== fstitch contract violation ====\n%s\nlast error: %s: %s\n", what.c_str(),
               fst_status_string(fst_last_error_status()), fst_last_error_message());
  std::abort();
}

std::string StatusSet::describe() const {
  std::string text;
  for (int s = FST_OK; s <= FST_ERROR_INTERNAL; ++s) {
    if (!contains(static_cast<fst_status>(s))) continue;
    if (!text.empty()) text += " or ";
    text += fst_status_string(static_cast<fst_status>(s));
  }
  return text.empty() ? "nothing" : text;
}

void check_failure(const char* function, fst_status status) {
  const int code = static_cast<int>(status);
  if (code <= FST_OK || code >= FST_ERROR_INTERNAL) {
    violation(std::string(function) + " returned " + fst_status_string(status) + " (" + std::to_string(code) +
              ")");
  }
  if (fst_last_error_status() != status) {
    violation(std::string(function) + " returned " + fst_status_string(status) +
              " but fst_last_error_status() says " + fst_status_string(fst_last_error_status()));
  }
  const std::string message = fst_last_error_message();
  const std::string prefix = std::string(function) + ": ";
  if (message.size() <= prefix.size() || message.compare(0, prefix.size(), prefix) != 0) {
    violation(std::string(function) + " failed with " + fst_status_string(status) +
              " but the last error message does not name it and say why: \"" + message + "\"");
  }
}

void check_status(const char* function, fst_status status, const Expectation& expect) {
  if (status != FST_OK) check_failure(function, status);
  switch (expect.kind) {
    case Expectation::Kind::kSucceed:
      if (status != FST_OK) {
        violation(std::string(function) + " must succeed on these arguments but returned " +
                  fst_status_string(status));
      }
      break;
    case Expectation::Kind::kFail:
      if (!expect.failures.contains(status)) {
        violation(std::string(function) + " must fail with " + expect.failures.describe() + " but returned " +
                  fst_status_string(status));
      }
      break;
    case Expectation::Kind::kUnknown:
      break;
  }
}

}  // namespace fstitch::fuzz

namespace fstitch::fuzz {

void clear_last_error() {
  if (fst_graph_status(nullptr) != FST_ERROR_INVALID_ARGUMENT) violation("fst_graph_status(NULL) must fail");
}

}  // namespace fstitch::fuzz
