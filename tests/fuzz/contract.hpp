// The documented C API contract, as checks shared by the fuzz targets. A violation prints
// what was expected and aborts, so libFuzzer saves the input that led to it.
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>

#include "fstitch.h"

namespace fstitch::fuzz {

[[noreturn]] void violation(const std::string& what);

// A set of statuses, for calls whose failure may have several documented causes at once.
class StatusSet {
 public:
  StatusSet() = default;
  StatusSet(std::initializer_list<fst_status> statuses) {
    for (fst_status s : statuses) add(s);
  }
  void add(fst_status s) { bits_ |= 1u << static_cast<unsigned>(s); }
  void add(const StatusSet& other) { bits_ |= other.bits_; }
  bool contains(fst_status s) const { return (bits_ >> static_cast<unsigned>(s)) & 1u; }
  bool empty() const { return bits_ == 0; }
  std::string describe() const;

 private:
  unsigned bits_ = 0;
};

// What a call must do, as far as the documentation determines it from its arguments.
struct Expectation {
  enum class Kind { kSucceed, kFail, kUnknown };
  Kind kind = Kind::kSucceed;
  StatusSet failures;  // for kFail: the statuses the documented faults allow

  static Expectation succeed() { return {}; }
  static Expectation unknown() { return {Kind::kUnknown, {}}; }
  static Expectation fail(StatusSet statuses) { return {Kind::kFail, statuses}; }

  // Adds a fault: the call must then fail with one of the statuses of its faults.
  void fault(fst_status status) {
    if (kind == Kind::kSucceed) kind = Kind::kFail;
    failures.add(status);
  }
  void fault(const StatusSet& statuses) {
    if (statuses.empty()) return;
    if (kind == Kind::kSucceed) kind = Kind::kFail;
    failures.add(statuses);
  }
  // An argument whose effect the model cannot predict (a value of unknown origin).
  void unpredictable() { kind = Kind::kUnknown; }
};

// Checks the contract of a failed call: a documented status other than FST_ERROR_INTERNAL,
// the thread's last error status equal to it, and a non-empty message naming `function`.
void check_failure(const char* function, fst_status status);

// Checks `status` against `expect`, and the failure contract when it is not FST_OK.
void check_status(const char* function, fst_status status, const Expectation& expect);

// Output parameters are untouched by a failed call: compares against the sentinel bytes.
template <class T>
void check_untouched(const char* function, const char* parameter, const T& value, const T& sentinel) {
  if (std::memcmp(&value, &sentinel, sizeof value) != 0) {
    violation(std::string(function) + " failed but wrote its output parameter " + parameter);
  }
}

}  // namespace fstitch::fuzz

namespace fstitch::fuzz {

// Makes the thread's last error one that no later check can mistake for the next call's:
// a call that fails but leaves an older message would then be caught.
void clear_last_error();

}  // namespace fstitch::fuzz
