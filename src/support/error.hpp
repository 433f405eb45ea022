// Internal error type: every failure inside fstitch is an Error carrying a status code.
// The C boundary (src/api) turns it into an fst_status and the thread's last message.
#pragma once

#include <stdexcept>
#include <string>

namespace fstitch {

// Mirrors fst_status numerically; src/api checks the correspondence at compile time.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,
  kShape = 2,
  kDtype = 3,
  kUnsupported = 4,
  kOutOfMemory = 5,
  kNoDevice = 6,
  kNoDriver = 7,
  kNoCompiler = 8,
  kCompile = 9,
  kLaunch = 10,
  kParse = 11,
  kInternal = 12,
};

class Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  StatusCode code() const noexcept { return code_; }

 private:
  StatusCode code_;
};

[[noreturn]] inline void fail(StatusCode code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace fstitch
