#include "ref/tensor.hpp"

#include "ir/numeric.hpp"
#include "support/error.hpp"

namespace fstitch::ref {

Tensor make_tensor(DType dtype, const Dims& dims) {
  Tensor t;
  t.dtype = dtype;
  t.dims = dims;
  const auto n = static_cast<size_t>(element_count(dims));
  if (is_float(dtype)) {
    t.f.assign(n, 0.0);
  } else {
    t.i.assign(n, 0);
  }
  return t;
}

void round_to_dtype(Tensor& t) {
  switch (t.dtype) {
    case DType::kF64:
    case DType::kI64:
      return;  // already exact in the working types
    case DType::kF32:
      for (double& v : t.f) v = static_cast<double>(static_cast<float>(v));
      return;
    case DType::kF16:
    case DType::kBF16:
      for (double& v : t.f) v = round_to_float_dtype(v, t.dtype);
      return;
    case DType::kI8:
    case DType::kI32:
    case DType::kU8:
    case DType::kBool:
      for (int64_t& v : t.i) v = wrap_to_integer_dtype(v, t.dtype);
      return;
  }
  internal_error("unknown dtype " + std::to_string(static_cast<int>(t.dtype)));
}

void internal_error(const std::string& what) {
  fail(StatusCode::kInternal,
       "reference evaluator: " + what + " (the graph should have failed verification)");
}

}  // namespace fstitch::ref
