// Elementwise kernels of the reference evaluator: unary, binary, select and cast. Operands
// have equal dims (the builders insert explicit broadcasts); results take those dims.
#pragma once

#include "ir/op.hpp"
#include "ref/tensor.hpp"

namespace fstitch::ref {

Tensor eval_unary(OpKind op, const Tensor& x);
Tensor eval_binary(OpKind op, const Tensor& a, const Tensor& b);
Tensor eval_select(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor eval_cast(const Tensor& x, DType to);

// GELU (erf form) in f64, as the evaluator computes it before rounding to the dtype.
double gelu_erf(double x);

}  // namespace fstitch::ref
