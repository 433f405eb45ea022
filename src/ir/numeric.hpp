// Exact scalar conversions shared by the graph builders (constants) and the reference
// evaluator: rounding to f32/f16/bf16 (round to nearest even, directly from f64) and the
// cast rules of fst_cast.
//
// A scalar is carried as a Scalar: a double for floating dtypes (already rounded to the
// dtype) and an int64 for integer and bool dtypes (already wrapped to the dtype's width).
#pragma once

#include <cstdint>

#include "ir/dtype.hpp"

namespace fstitch {

uint16_t f64_to_f16_bits(double x);
double f16_bits_to_f64(uint16_t bits);
uint16_t f64_to_bf16_bits(double x);
double bf16_bits_to_f64(uint16_t bits);

// Rounds x to the nearest value representable in the floating dtype (RNE, overflow to inf).
double round_to_float_dtype(double x, DType dtype);

// Wraps x to the width of the integer dtype (two's complement); bool gives x != 0.
int64_t wrap_to_integer_dtype(int64_t x, DType dtype);

struct Scalar {
  double f = 0;   // valid when the dtype is floating
  int64_t i = 0;  // valid when the dtype is integer or bool
};

// Conversions with fst_cast semantics into `to`.
Scalar scalar_from_f64(double x, DType to);  // float->int: trunc, saturate, NaN->0
Scalar scalar_from_i64(int64_t x, DType to);
Scalar cast_scalar(Scalar x, DType from, DType to);

// Reads / writes one element of a dense buffer of dtype `dtype`.
Scalar load_scalar(const void* base, int64_t index, DType dtype);
void store_scalar(void* base, int64_t index, DType dtype, Scalar value);

}  // namespace fstitch
