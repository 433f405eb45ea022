// Scalar semantics shared by the elementwise and reduction kernels of the reference
// evaluator, so that, e.g., binary max and reduce_max agree on every input.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace fstitch::ref {

// Integer arithmetic wraps: computed in uint64 (where overflow is defined) and read back
// as int64; kernels then wrap the result to the dtype's width.
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Truncates toward zero; x / 0 is 0; the most negative value / -1 wraps to itself (for
// INT64_MIN here, for narrower dtypes when the result is wrapped to their width).
inline int64_t integer_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrapping_sub(0, a);  // INT64_MIN / -1 would be undefined behaviour
  return a / b;
}

// NaN if either operand is NaN; +0 counts as larger than -0, so the result does not depend
// on the operand order.
inline double float_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double float_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

}  // namespace fstitch::ref
