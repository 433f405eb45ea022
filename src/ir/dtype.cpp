#include "ir/dtype.hpp"

#include <limits>

namespace fstitch {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kI8:
      return 1;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kU8:
      return 1;
    case DType::kBool:
      return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF64:
      return "f64";
    case DType::kI8:
      return "i8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kU8:
      return "u8";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = kFirstDType; i <= kLastDType; ++i) {
    auto dtype = static_cast<DType>(i);
    if (name == dtype_name(dtype)) return dtype;
  }
  return std::nullopt;
}

int64_t integer_min(DType t) {
  switch (t) {
    case DType::kI8:
      return std::numeric_limits<int8_t>::min();
    case DType::kI32:
      return std::numeric_limits<int32_t>::min();
    case DType::kI64:
      return std::numeric_limits<int64_t>::min();
    default:
      return 0;
  }
}

int64_t integer_max(DType t) {
  switch (t) {
    case DType::kI8:
      return std::numeric_limits<int8_t>::max();
    case DType::kI32:
      return std::numeric_limits<int32_t>::max();
    case DType::kI64:
      return std::numeric_limits<int64_t>::max();
    case DType::kU8:
      return std::numeric_limits<uint8_t>::max();
    case DType::kBool:
      return 1;
    default:
      return 0;
  }
}

}  // namespace fstitch
