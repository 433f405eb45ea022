// Layout kernels of the reference evaluator: broadcast, reshape, permute and iota. They move
// or generate elements without arithmetic (iota converts its indices to the dtype).
#pragma once

#include <vector>

#include "ref/tensor.hpp"

namespace fstitch::ref {

// numpy rules: dims aligned at the right, size-1 dims stretch, the rank may grow.
Tensor eval_broadcast(const Tensor& x, const Dims& dims);

// Takes x by value so a caller that no longer needs x can move its storage in.
Tensor eval_reshape(Tensor x, const Dims& dims);

// Result dim i is x's dim perm[i].
Tensor eval_permute(const Tensor& x, const std::vector<int64_t>& perm);

// Each element is its index along `axis`, converted to `dtype` as by a cast from int64.
Tensor eval_iota(DType dtype, const Dims& dims, int64_t axis);

}  // namespace fstitch::ref
