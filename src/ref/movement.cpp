#include "ref/movement.hpp"

#include <string>

namespace fstitch::ref {
namespace {

// Row-major odometer over `dims`, calling fn(index) with the multi-index of each element.
template <class Fn>
void for_each_index(const Dims& dims, Fn&& fn) {
  std::vector<int64_t> index(dims.size(), 0);
  const int64_t n = element_count(dims);
  for (int64_t k = 0; k < n; ++k) {
    fn(index);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

void copy_element(Tensor& out, int64_t to, const Tensor& x, int64_t from) {
  if (is_float(x.dtype)) {
    out.f[static_cast<size_t>(to)] = x.f[static_cast<size_t>(from)];
  } else {
    out.i[static_cast<size_t>(to)] = x.i[static_cast<size_t>(from)];
  }
}

void set_element(Tensor& out, int64_t to, Scalar value) {
  if (is_float(out.dtype)) {
    out.f[static_cast<size_t>(to)] = value.f;
  } else {
    out.i[static_cast<size_t>(to)] = value.i;
  }
}

int64_t flat_offset(const std::vector<int64_t>& index, const Dims& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return offset;
}

}  // namespace

Tensor eval_slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                  const Dims& dims) {
  if (starts.size() != x.dims.size() || steps.size() != x.dims.size() || dims.size() != x.dims.size())
    internal_error("slice attributes do not match " + dims_to_string(x.dims));
  const Dims strides = row_major_strides(x.dims);
  Tensor out = make_tensor(x.dtype, dims);
  int64_t k = 0;
  for_each_index(dims, [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      const int64_t at = starts[d] + index[d] * steps[d];
      if (at < 0 || at >= x.dims[d]) internal_error("slice reads outside " + dims_to_string(x.dims));
      offset += at * strides[d];
    }
    copy_element(out, k++, x, offset);
  });
  return out;
}

Tensor eval_concat(const std::vector<const Tensor*>& xs, int64_t axis) {
  if (xs.empty()) internal_error("concat of no operands");
  const auto a = static_cast<size_t>(axis);
  Dims dims = xs[0]->dims;
  if (a >= dims.size())
    internal_error("concat axis " + std::to_string(axis) + " for " + dims_to_string(dims));
  dims[a] = 0;
  for (const Tensor* x : xs) dims[a] += x->dims[a];
  Tensor out = make_tensor(xs[0]->dtype, dims);
  const Dims out_strides = row_major_strides(dims);
  int64_t offset = 0;  // where the current operand starts along the axis
  for (const Tensor* x : xs) {
    if (x->dtype != out.dtype || x->dims.size() != dims.size())
      internal_error("concat operands of different dtypes or ranks");
    int64_t k = 0;
    for_each_index(x->dims, [&](std::vector<int64_t> index) {
      index[a] += offset;
      copy_element(out, flat_offset(index, out_strides), *x, k++);
    });
    offset += x->dims[a];
  }
  return out;
}

Tensor eval_pad(const Tensor& x, const std::vector<int64_t>& low, const Dims& dims, Scalar value) {
  if (low.size() != x.dims.size() || dims.size() != x.dims.size())
    internal_error("pad attributes do not match " + dims_to_string(x.dims));
  Tensor out = make_tensor(x.dtype, dims);
  for (int64_t k = 0; k < out.size(); ++k) set_element(out, k, value);
  const Dims out_strides = row_major_strides(dims);
  int64_t k = 0;
  for_each_index(x.dims, [&](std::vector<int64_t> index) {
    for (size_t d = 0; d < index.size(); ++d) index[d] += low[d];
    copy_element(out, flat_offset(index, out_strides), x, k++);
  });
  return out;
}

Tensor eval_take(const Tensor& x, const Tensor& indices, int64_t axis) {
  const auto a = static_cast<size_t>(axis);
  if (a >= x.dims.size() || is_float(indices.dtype)) internal_error("take of " + dims_to_string(x.dims));
  const int64_t n = x.dims[a];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= x.dims[d];
  for (size_t d = a + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  Dims dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(a));
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.dims.end());
  Tensor out = make_tensor(x.dtype, dims);  // zeroed: out-of-range indices leave 0 (false)
  const int64_t count = indices.size();
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t i = indices.i[static_cast<size_t>(j)];
      if (i < 0) i += n;  // no overflow: i is at least INT64_MIN and n is positive
      if (i < 0 || i >= n) {
        k += inner;
        continue;
      }
      const int64_t base = (o * n + i) * inner;
      for (int64_t e = 0; e < inner; ++e) copy_element(out, k++, x, base + e);
    }
  }
  return out;
}

}  // namespace fstitch::ref
