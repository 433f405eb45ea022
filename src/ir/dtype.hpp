// Element types and their properties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fstitch {

// Numerically equal to fst_dtype.
enum class DType : uint8_t {
  kF32 = 1,
  kF16 = 2,
  kBF16 = 3,
  kF64 = 4,
  kI8 = 5,
  kI32 = 6,
  kI64 = 7,
  kU8 = 8,
  kBool = 9
};

constexpr int kFirstDType = 1;
constexpr int kLastDType = 9;

inline bool is_valid_dtype(int value) {
  return value >= kFirstDType && value <= kLastDType;
}

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);

inline bool is_float(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}
inline bool is_bool(DType t) {
  return t == DType::kBool;
}
inline bool is_integer(DType t) {
  return !is_float(t) && !is_bool(t);
}
inline bool is_signed_integer(DType t) {
  return t == DType::kI8 || t == DType::kI32 || t == DType::kI64;
}

// Range of an integer dtype.
int64_t integer_min(DType t);
int64_t integer_max(DType t);

}  // namespace fstitch
