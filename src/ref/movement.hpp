// Data-movement kernels of the reference evaluator: slice, concat, pad and take. Each result
// element is one operand element (or the pad value, or 0 for an out-of-range take index).
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "ref/tensor.hpp"

namespace fstitch::ref {

// Result element i (per axis) is x[start + i * step]; `dims` are the result dims.
Tensor eval_slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Dims& dims);

// The operands one after another along `axis`.
Tensor eval_concat(const std::vector<const Tensor*>& xs, int64_t axis);

// x placed at offset `low` in a result of `dims` filled with `value` (already in x's dtype).
Tensor eval_pad(const Tensor& x, const std::vector<int64_t>& low, const Dims& dims, Scalar value);

// result[..., j..., ...] = x[..., k, ...] with k = indices[j...], plus x's dim when negative;
// 0 (false) where the index is outside -dim..dim-1.
Tensor eval_take(const Tensor& x, const Tensor& indices, int64_t axis);

}  // namespace fstitch::ref
