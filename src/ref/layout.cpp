#include "ref/layout.hpp"

#include <algorithm>
#include <string>

#include "ir/numeric.hpp"

namespace fstitch::ref {
namespace {

// Copies x's elements in the order given by walking `dims` with x's `strides`.
Tensor gather_strided(const Tensor& x, const Dims& dims, const Dims& strides) {
  Tensor out = make_tensor(x.dtype, dims);
  size_t k = 0;
  if (is_float(x.dtype)) {
    for_each_strided(dims, strides, [&](int64_t offset) { out.f[k++] = x.f[static_cast<size_t>(offset)]; });
  } else {
    for_each_strided(dims, strides, [&](int64_t offset) { out.i[k++] = x.i[static_cast<size_t>(offset)]; });
  }
  return out;
}

}  // namespace

Tensor eval_broadcast(const Tensor& x, const Dims& dims) {
  if (x.dims.size() > dims.size()) {
    internal_error("broadcast from " + dims_to_string(x.dims) + " to the lower rank " + dims_to_string(dims));
  }
  const size_t offset = dims.size() - x.dims.size();
  const Dims x_strides = row_major_strides(x.dims);
  Dims strides(dims.size(), 0);  // new leading dims and stretched dims re-read the same elements
  for (size_t d = 0; d < x.dims.size(); ++d) {
    const int64_t from = x.dims[d];
    const int64_t to = dims[offset + d];
    if (from == to) {
      strides[offset + d] = x_strides[d];
    } else if (from != 1) {
      internal_error("cannot broadcast " + dims_to_string(x.dims) + " to " + dims_to_string(dims));
    }
  }
  return gather_strided(x, dims, strides);
}

Tensor eval_reshape(Tensor x, const Dims& dims) {
  if (element_count(dims) != x.size()) {
    internal_error("reshape of " + std::to_string(x.size()) + " elements to " + dims_to_string(dims));
  }
  x.dims = dims;
  return x;
}

Tensor eval_permute(const Tensor& x, const std::vector<int64_t>& perm) {
  const size_t rank = x.dims.size();
  if (perm.size() != rank)
    internal_error("permutation " + dims_to_string(perm) + " for " + dims_to_string(x.dims));
  const Dims x_strides = row_major_strides(x.dims);
  std::vector<bool> seen(rank, false);
  Dims dims(rank);
  Dims strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t p = perm[d];
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[static_cast<size_t>(p)]) {
      internal_error(dims_to_string(perm) + " is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
    dims[d] = x.dims[static_cast<size_t>(p)];
    strides[d] = x_strides[static_cast<size_t>(p)];
  }
  return gather_strided(x, dims, strides);
}

Tensor eval_iota(DType dtype, const Dims& dims, int64_t axis) {
  if (axis < 0 || static_cast<size_t>(axis) >= dims.size()) {
    internal_error("iota axis " + std::to_string(axis) + " for " + dims_to_string(dims));
  }
  Tensor out = make_tensor(dtype, dims);
  const auto a = static_cast<size_t>(axis);
  int64_t outer = 1;
  for (size_t d = 0; d < a; ++d) outer *= dims[d];
  int64_t inner = 1;
  for (size_t d = a + 1; d < dims.size(); ++d) inner *= dims[d];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index = 0; index < dims[a]; ++index, k += inner) {
      const Scalar value = scalar_from_i64(index, dtype);
      if (is_float(dtype)) {
        std::fill_n(out.f.begin() + k, inner, value.f);
      } else {
        std::fill_n(out.i.begin() + k, inner, value.i);
      }
    }
  }
  return out;
}

}  // namespace fstitch::ref
