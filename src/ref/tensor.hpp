// The reference evaluator's intermediate values: dense row-major tensors kept compactly,
// doubles for floating dtypes (each already rounded to its dtype) and int64 for integer and
// bool dtypes (each already wrapped to its width; bool is 0 or 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace fstitch::ref {

struct Tensor {
  DType dtype = DType::kF32;
  Dims dims;
  std::vector<double> f;   // used when is_float(dtype)
  std::vector<int64_t> i;  // used otherwise

  int64_t size() const { return static_cast<int64_t>(is_float(dtype) ? f.size() : i.size()); }
};

// A tensor of `dtype` and `dims` with zeroed storage of the right kind.
Tensor make_tensor(DType dtype, const Dims& dims);

// Rounds (floating) or wraps (integer, bool) every element to the tensor's dtype, so
// kernels may compute in float64 / int64 and finalize once.
void round_to_dtype(Tensor& t);

// Throws kInternal with `what`: for states a verified graph cannot reach.
[[noreturn]] void internal_error(const std::string& what);

// Calls fn(offset) for every index of `dims` in row-major order, where offset is the dot
// product of the index with `strides`, kept as a running sum (no per-element division).
template <class Fn>
void for_each_strided(const Dims& dims, const Dims& strides, Fn&& fn) {
  const size_t rank = dims.size();
  if (rank == 0) {
    fn(int64_t{0});
    return;
  }
  const int64_t inner_dim = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);  // only the outer rank - 1 entries are used
  int64_t base = 0;
  for (;;) {
    int64_t offset = base;
    for (int64_t k = 0; k < inner_dim; ++k, offset += inner_stride) fn(offset);
    // Advance the odometer over the outer dims.
    size_t d = rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      base += strides[d];
      if (++index[d] < dims[d]) break;
      base -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace fstitch::ref
