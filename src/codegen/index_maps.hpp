// Index maps of the layout and data-movement operations: for a value evaluated at a flat
// index expression, the flat index expression at which its operand is read. Expressions are
// CUDA C `long long` arithmetic on the index text; they never divide by a dim of 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/shape.hpp"

namespace fstitch {

// "123LL": an index constant.
std::string index_literal(int64_t v);

// Flat index of operand dims `od` for a flat index `idx` of a value of dims `vd` broadcast
// from it (numpy rules).
std::string broadcast_index(const Dims& vd, const Dims& od, const std::string& idx);

// Flat index of operand dims `od` for index `idx` of its permutation `vd` (vd[i] = od[perm[i]]).
std::string permute_index(const Dims& vd, const Dims& od, const std::vector<int64_t>& perm,
                          const std::string& idx);

// Coordinate `axis` of flat index `idx` of a value of dims `dims`, reduced modulo the dim on
// every axis (the first included), so it is in range even for an index past the end (a
// row kernel's rows past the last, whose results are discarded).
std::string coordinate(const Dims& dims, size_t axis, const std::string& idx);

// Flat index of per-axis coordinate expressions in `dims` (axes of dim 1 are skipped).
std::string flat_index(const Dims& dims, const std::vector<std::string>& coords);

// Flat index of operand dims `od` for index `idx` of the slice `vd` of it.
std::string slice_index(const Dims& vd, const Dims& od, const std::vector<int64_t>& starts,
                        const std::vector<int64_t>& steps, const std::string& idx);

}  // namespace fstitch
