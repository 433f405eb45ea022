#include "ref/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ref/scalar_ops.hpp"

namespace fstitch::ref {
namespace {

// Walks x in row-major order; strides map each element to its output element, with stride
// 0 along reduced axes, so acc[offset] = combine(acc[offset], element).
template <class T, class Combine>
void accumulate(const std::vector<T>& x, const Dims& x_dims, const Dims& out_strides, std::vector<T>& acc,
                T init, Combine combine) {
  std::fill(acc.begin(), acc.end(), init);
  size_t k = 0;
  for_each_strided(x_dims, out_strides, [&](int64_t offset) {
    T& a = acc[static_cast<size_t>(offset)];
    a = combine(a, x[k++]);
  });
}

void reduce_float(OpKind op, const Tensor& x, const Dims& strides, Tensor& out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (op) {
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
      accumulate(x.f, x.dims, strides, out.f, 0.0, [](double a, double v) { return a + v; });
      break;
    case OpKind::kReduceProd:
      accumulate(x.f, x.dims, strides, out.f, 1.0, [](double a, double v) { return a * v; });
      break;
    case OpKind::kReduceMax:
      accumulate(x.f, x.dims, strides, out.f, -kInf, float_max);
      break;
    case OpKind::kReduceMin:
      accumulate(x.f, x.dims, strides, out.f, kInf, float_min);
      break;
    default:
      internal_error(std::string(op_name(op)) + " is not a reduction");
  }
  if (op == OpKind::kReduceMean) {
    const auto count = static_cast<double>(x.size() / out.size());
    for (double& v : out.f) v /= count;
  }
}

void reduce_int(OpKind op, const Tensor& x, const Dims& strides, Tensor& out) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (op) {
    case OpKind::kReduceSum:
      accumulate(x.i, x.dims, strides, out.i, int64_t{0}, wrapping_add);
      break;
    case OpKind::kReduceProd:
      accumulate(x.i, x.dims, strides, out.i, int64_t{1}, wrapping_mul);
      break;
    // On bool (0/1) these are any / all.
    case OpKind::kReduceMax:
      accumulate(x.i, x.dims, strides, out.i, kMin, [](int64_t a, int64_t v) { return v > a ? v : a; });
      break;
    case OpKind::kReduceMin:
      accumulate(x.i, x.dims, strides, out.i, kMax, [](int64_t a, int64_t v) { return v < a ? v : a; });
      break;
    default:
      internal_error(std::string(op_name(op)) + " does not accept " + dtype_name(x.dtype) + " operands");
  }
}

}  // namespace

Tensor eval_reduce(OpKind op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  const size_t rank = x.dims.size();
  std::vector<bool> reduced(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || static_cast<size_t>(axes[k]) >= rank || (k > 0 && axes[k] <= axes[k - 1])) {
      internal_error("reduction axes " + dims_to_string(axes) + " for " + dims_to_string(x.dims));
    }
    reduced[static_cast<size_t>(axes[k])] = true;
  }
  if (axes.empty()) internal_error("a reduction without axes");
  Dims kept(rank);  // x's dims with the reduced ones set to 1: same row-major order as the result
  Dims out_dims;
  for (size_t d = 0; d < rank; ++d) {
    kept[d] = reduced[d] ? 1 : x.dims[d];
    if (!reduced[d] || keepdims) out_dims.push_back(kept[d]);
  }
  Dims strides = row_major_strides(kept);
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) strides[d] = 0;
  }
  Tensor out = make_tensor(x.dtype, out_dims);
  if (is_float(x.dtype)) {
    reduce_float(op, x, strides, out);
  } else {
    reduce_int(op, x, strides, out);
  }
  round_to_dtype(out);
  return out;
}

}  // namespace fstitch::ref
