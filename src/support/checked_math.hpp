// Overflow-checked integer arithmetic for sizes computed from shapes: a size that does not
// fit its type is an error with a status code, never a wrapped value.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "support/error.hpp"

namespace fstitch {

// a + b, or nothing when it does not fit in T.
template <class T>
[[nodiscard]] std::optional<T> checked_add(T a, T b) {
  static_assert(std::is_integral_v<T>, "sizes are integers");
  T sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// a * b, or nothing when it does not fit in T.
template <class T>
[[nodiscard]] std::optional<T> checked_mul(T a, T b) {
  static_assert(std::is_integral_v<T>, "sizes are integers");
  T product;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// a + b, or fail(code, message()) when it does not fit in T. `message` is called only on
// failure, so building the text costs nothing on the common path.
template <class T, class Message>
T add_or_fail(T a, T b, StatusCode code, Message&& message) {
  const std::optional<T> sum = checked_add(a, b);
  if (!sum) fail(code, message());
  return *sum;
}

// a * b, or fail(code, message()) when it does not fit in T.
template <class T, class Message>
T mul_or_fail(T a, T b, StatusCode code, Message&& message) {
  const std::optional<T> product = checked_mul(a, b);
  if (!product) fail(code, message());
  return *product;
}

}  // namespace fstitch
