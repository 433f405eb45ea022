#include "codegen/cuda_types.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "support/number_text.hpp"

namespace fstitch {

const char* storage_type(DType t) {
  switch (t) {
    case DType::kF32:
      return "float";
    case DType::kF16:
    case DType::kBF16:
      return "unsigned short";
    case DType::kF64:
      return "double";
    case DType::kI8:
      return "signed char";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "long long";
    case DType::kU8:
    case DType::kBool:
      return "unsigned char";
  }
  return "?";
}

bool computes_in_double(DType t) {
  return t == DType::kF64;
}

const char* compute_type(DType t) {
  if (is_float(t)) return t == DType::kF64 ? "double" : "float";
  return t == DType::kI64 ? "long long" : "int";
}

std::string load_expr(DType t, const std::string& p, const std::string& i) {
  return from_storage_expr(t, p + "[" + i + "]");
}

std::string storage_from_bits(DType t, const std::string& b) {
  switch (t) {
    case DType::kF32:
      return "__uint_as_float(" + b + ")";
    case DType::kF64:
      return "__longlong_as_double((long long)(" + b + "))";
    default:
      return std::string("(") + storage_type(t) + ")(" + b + ")";
  }
}

std::string bits_from_storage(DType t, const std::string& v) {
  switch (t) {
    case DType::kF32:
      return "__float_as_uint(" + v + ")";
    case DType::kF64:
      return "(unsigned long long)__double_as_longlong(" + v + ")";
    case DType::kI64:
      return "(unsigned long long)(" + v + ")";
    case DType::kI32:
      return "(unsigned)(" + v + ")";
    case DType::kF16:
    case DType::kBF16:
      return "(unsigned)(" + v + ")";
    default:
      return "(unsigned)(unsigned char)(" + v + ")";
  }
}

std::string from_storage_expr(DType t, const std::string& e) {
  switch (t) {
    case DType::kF16:
      return "fst_f16_to_f32(" + e + ")";
    case DType::kBF16:
      return "fst_bf16_to_f32(" + e + ")";
    case DType::kI8:
    case DType::kU8:
      return "(int)" + e;
    case DType::kBool:
      return "(int)(" + e + " != 0)";
    default:
      return e;
  }
}

std::string store_value_expr(DType t, const std::string& v) {
  switch (t) {
    case DType::kF16:
      return "fst_f32_to_f16(" + v + ")";
    case DType::kBF16:
      return "fst_bf16_bits(" + v + ")";  // the value is already rounded to bf16
    case DType::kBool:
      return "(unsigned char)(" + v + " != 0)";
    default:
      return std::string("(") + storage_type(t) + ")(" + v + ")";
  }
}

std::string store_rounded_expr(DType t, const std::string& v) {
  switch (t) {
    case DType::kF16:
      return "fst_f32_to_f16(" + v + ")";
    case DType::kBF16:
      return "fst_f32_to_bf16(" + v + ")";
    default:
      return store_value_expr(t, round_expr(t, v));
  }
}

std::string round_arithmetic_expr(DType t, const std::string& v) {
  return t == DType::kBF16 ? "fst_round_bf16_arith(" + v + ")" : round_expr(t, v);
}

std::string round_expr(DType t, const std::string& v) {
  switch (t) {
    case DType::kF16:
      return "fst_round_f16(" + v + ")";
    case DType::kBF16:
      return "fst_round_bf16(" + v + ")";
    case DType::kI8:
      return "(int)(signed char)(" + v + ")";
    case DType::kU8:
      return "(int)(unsigned char)(" + v + ")";
    case DType::kI32:
      return "(int)(" + v + ")";
    case DType::kBool:
      return "(int)((" + v + ") != 0)";
    default:
      return v;
  }
}

namespace {

// A float bit pattern as an expression: keeps the sign and payload of NaNs, which decimal
// text cannot spell, and needs no INFINITY macro (NVRTC has none).
std::string f32_bits_expr(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return "__int_as_float((int)" + hex_text(bits) + "u)";
}

std::string f64_bits_expr(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return "__longlong_as_double((long long)" + hex_text(bits) + "ULL)";
}

// A decimal literal that reads back as the same value: "(0.25f)", "(2.0)", "(1e+10f)".
std::string decimal_literal(std::string text, const char* suffix) {
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return "(" + text + suffix + ")";
}

// An integer as C text; the most negative value of each width is spelled as an expression
// because its magnitude alone does not fit the type.
std::string integer_literal(int64_t value, bool wide) {
  if (wide) {
    if (value == INT64_MIN) return "(-9223372036854775807LL - 1)";
    return "(" + std::to_string(value) + "LL)";
  }
  if (value == INT32_MIN) return "(-2147483647 - 1)";
  return "(" + std::to_string(value) + ")";
}

}  // namespace

std::string literal(DType t, Scalar value) {
  if (is_float(t)) {
    const double x = value.f;
    if (t == DType::kF64) return std::isfinite(x) ? decimal_literal(shortest_text(x), "") : f64_bits_expr(x);
    // f32, f16 and bf16 compute in float; the value is already rounded to its dtype.
    const float f = static_cast<float>(x);
    return std::isfinite(f) ? decimal_literal(shortest_text(f), "f") : f32_bits_expr(f);
  }
  return integer_literal(value.i, t == DType::kI64);
}

std::string cast_expr(DType from, DType to, const std::string& v) {
  if (is_float(to)) {
    if (from == DType::kF64 && to == DType::kF16) return "fst_round_f64_f16(" + v + ")";
    if (from == DType::kF64 && to == DType::kBF16) return "fst_round_f64_bf16(" + v + ")";
    const std::string converted = std::string("(") + compute_type(to) + ")(" + v + ")";
    return round_expr(to, converted);
  }
  if (is_bool(to)) return "(int)((" + v + ") != 0)";
  if (is_float(from)) {
    // fst_f2i(value, lo, hi, lo_int, hi_int): the bounds as doubles and as integers.
    const int64_t lo = integer_min(to), hi = integer_max(to);
    const std::string call = "fst_f2i((double)(" + v + "), " +
                             literal(DType::kF64, Scalar{static_cast<double>(lo), 0}) + ", " +
                             literal(DType::kF64, Scalar{static_cast<double>(hi), 0}) + ", " +
                             integer_literal(lo, true) + ", " + integer_literal(hi, true) + ")";
    return std::string("(") + compute_type(to) + ")" + call;
  }
  if (to == DType::kI64) return "(long long)(" + v + ")";
  return round_expr(to, v);
}

}  // namespace fstitch
