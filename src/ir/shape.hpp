// Shapes: row-major dims of int64, rank at most kMaxRank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fstitch {

using Dims = std::vector<int64_t>;

constexpr size_t kMaxRank = 8;

// Product of dims; callers validate dims first (validate_dims), so it cannot overflow.
int64_t element_count(const Dims& dims);

// Throws a shape Error (mentioning `what`) unless rank <= kMaxRank, every dim >= 1 and the
// element count fits in int64.
void validate_dims(const Dims& dims, const std::string& what);

// "[8,16]"; "[]" for a scalar.
std::string dims_to_string(const Dims& dims);

// Row-major strides of dims.
Dims row_major_strides(const Dims& dims);

}  // namespace fstitch
