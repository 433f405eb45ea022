#include "ir/shape.hpp"

#include "support/checked_math.hpp"
#include "support/error.hpp"

namespace fstitch {

int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

void validate_dims(const Dims& dims, const std::string& what) {
  if (dims.size() > kMaxRank) {
    fail(StatusCode::kShape, what + " has rank " + std::to_string(dims.size()) + ", more than the maximum " +
                                 std::to_string(kMaxRank));
  }
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 1) {
      fail(d == 0 ? StatusCode::kUnsupported : StatusCode::kShape,
           what + " has dim " + std::to_string(i) + " = " + std::to_string(d) +
               (d == 0 ? "; empty tensors are not supported" : "; dims must be at least 1"));
    }
    const std::optional<int64_t> product = checked_mul(n, d);
    if (!product) {
      fail(StatusCode::kShape, what + " " + dims_to_string(dims) + " has more elements than int64 can count");
    }
    n = *product;
  }
}

void validate_value_size(DType dtype, const Dims& dims, const std::string& what) {
  validate_dims(dims, what);
  const int64_t elements = element_count(dims);
  const auto element_bytes = static_cast<int64_t>(dtype_size(dtype));
  const std::optional<int64_t> bytes = checked_mul(elements, element_bytes);
  if (!bytes || *bytes > kMaxValueBytes) {
    fail(StatusCode::kShape, what + " " + dtype_name(dtype) + dims_to_string(dims) + " has " +
                                 std::to_string(elements) + " elements of " + std::to_string(element_bytes) +
                                 " byte(s), more than the limit of 2^62 bytes for one value");
  }
}

uint64_t byte_size(DType dtype, const Dims& dims) {
  return static_cast<uint64_t>(element_count(dims)) * dtype_size(dtype);
}

std::string dims_to_string(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Dims row_major_strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

BroadcastLanes broadcast_lanes(const Dims& value, const Dims& operand, int lanes) {
  // Lanes base..base+lanes-1 share every coordinate but the innermost when the innermost dim
  // is a multiple of lanes; the innermost coordinate maps to the operand's unless broadcast.
  if (lanes < 1 || value.empty() || value.back() % lanes != 0) return BroadcastLanes::kScattered;
  const bool kept = !operand.empty() && operand.back() == value.back() && value.back() != 1;
  return kept ? BroadcastLanes::kContiguous : BroadcastLanes::kUniform;
}

}  // namespace fstitch
