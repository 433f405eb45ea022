// Shapes: row-major dims of int64, rank at most kMaxRank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace fstitch {

using Dims = std::vector<int64_t>;

constexpr size_t kMaxRank = 8;

// Product of dims; callers validate dims first (validate_dims), so it cannot overflow.
int64_t element_count(const Dims& dims);

// Throws a shape Error (mentioning `what`) unless rank <= kMaxRank, every dim >= 1 and the
// element count fits in int64.
void validate_dims(const Dims& dims, const std::string& what);

// The most bytes one value may have: 2^62 (4 EiB). Every value is checked against it when it
// is created (validate_value_size, called by infer_type for every builder and so for the
// text parser), so a value's byte size, the sum of a few such sizes and any index into a
// value fit in int64 with room to spare. Totals over many values (the workspace, traffic
// estimates) still use checked arithmetic (support/checked_math.hpp).
constexpr int64_t kMaxValueBytes = int64_t{1} << 62;

// Throws a shape Error (mentioning `what`) unless the dims are valid (validate_dims) and
// their element count times dtype_size(dtype) is at most kMaxValueBytes.
void validate_value_size(DType dtype, const Dims& dims, const std::string& what);

// Element count x dtype size; callers validate first (validate_value_size), so it is at most
// kMaxValueBytes.
uint64_t byte_size(DType dtype, const Dims& dims);

// "[8,16]"; "[]" for a scalar.
std::string dims_to_string(const Dims& dims);

// Row-major strides of dims.
Dims row_major_strides(const Dims& dims);

// How `lanes` consecutive elements of a value broadcast from `operand` (numpy rules), the
// first at a multiple of `lanes`, read the operand.
enum class BroadcastLanes : uint8_t {
  kScattered,   // any other way: each lane computes its own index
  kContiguous,  // at consecutive indices (the innermost axis is kept and a multiple of lanes)
  kUniform,     // all at one index (the innermost axis is broadcast and a multiple of lanes)
};
BroadcastLanes broadcast_lanes(const Dims& value, const Dims& operand, int lanes);

}  // namespace fstitch
