// How IR dtypes appear in generated CUDA C: storage types in memory, compute types in
// registers, and the expressions that convert between them and round to a dtype.
#pragma once

#include <string>

#include "ir/dtype.hpp"
#include "ir/numeric.hpp"

namespace fstitch {

const char* storage_type(DType t);  // float, unsigned short (f16/bf16 bits), unsigned char (bool)...
const char* compute_type(DType t);  // float, double, int or long long
bool computes_in_double(DType t);

std::string load_expr(DType t, const std::string& pointer, const std::string& index);
std::string from_storage_expr(DType t, const std::string& stored);  // storage value -> compute value
// Between a storage value and its bits as an unsigned integer of the same size (for
// assembling and splitting 16-byte vector accesses).
std::string storage_from_bits(DType t, const std::string& bits);
std::string bits_from_storage(DType t, const std::string& stored);
// compute -> storage, for a value already rounded to t (as every value of a kernel is)
std::string store_value_expr(DType t, const std::string& value);
std::string round_expr(DType t, const std::string& value);  // wrap/round a compute value to t
// round_expr for a value one f32 add, subtract or multiply gave (result_has_canonical_nan in
// plan/op_class.hpp): a bf16 rounding without the NaN rule, whose bits are the same there.
std::string round_arithmetic_expr(DType t, const std::string& value);
// The storage bits of a compute value not yet rounded to t: what store_value_expr gives
// for round_expr(t, value), converted once.
std::string store_rounded_expr(DType t, const std::string& value);
std::string literal(DType t, Scalar value);
std::string cast_expr(DType from, DType to, const std::string& value);

}  // namespace fstitch
