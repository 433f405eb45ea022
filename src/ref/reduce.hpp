// Reductions of the reference evaluator: sum, mean, max, min and prod over a set of axes.
// Floating values accumulate in float64 and integers in int64 (wrapping); the result is
// rounded or wrapped to the dtype once, at the end.
#pragma once

#include <vector>

#include "ir/op.hpp"
#include "ref/tensor.hpp"

namespace fstitch::ref {

// `axes` sorted, distinct and in range; with keepdims the reduced axes stay as dims of 1.
Tensor eval_reduce(OpKind op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims);

}  // namespace fstitch::ref
