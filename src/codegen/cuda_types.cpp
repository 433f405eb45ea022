#include "codegen/cuda_types.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

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
      return "fst_f32_to_bf16(" + v + ")";
    case DType::kBool:
      return "(unsigned char)(" + v + " != 0)";
    default:
      return std::string("(") + storage_type(t) + ")(" + v + ")";
  }
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

std::string literal(DType t, Scalar value) {
  char buf[64];
  if (is_float(t)) {
    const double x = value.f;
    if (t == DType::kF64) {
      if (std::isnan(x)) return "__longlong_as_double(0x7ff8000000000000LL)";
      if (std::isinf(x))
        return x > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                     : "__longlong_as_double((long long)0xfff0000000000000ULL)";
      std::snprintf(buf, sizeof buf, "%.17g", x);
      std::string s = buf;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return "(" + s + ")";
    }
    if (std::isnan(x)) return "__int_as_float(0x7fc00000)";
    if (std::isinf(x)) return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)";
    std::snprintf(buf, sizeof buf, "%.9g", x);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return "(" + s + "f)";
  }
  if (t == DType::kI64) {
    if (value.i == INT64_MIN) return "(-9223372036854775807LL - 1)";
    std::snprintf(buf, sizeof buf, "(%lldLL)", static_cast<long long>(value.i));
    return buf;
  }
  if (value.i == INT32_MIN) return "(-2147483647 - 1)";
  std::snprintf(buf, sizeof buf, "(%lld)", static_cast<long long>(value.i));
  return buf;
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
    char buf[160];
    const long long lo = integer_min(to), hi = integer_max(to);
    std::snprintf(buf, sizeof buf, "fst_f2i((double)(%s), %.17g, %.17g, %lldLL, %lldLL)", v.c_str(),
                  static_cast<double>(lo), static_cast<double>(hi), lo, hi);
    std::string s = buf;
    if (lo == INT64_MIN) {
      const std::string bad = "-9223372036854775808LL";
      s.replace(s.find(bad), bad.size(), "(-9223372036854775807LL - 1)");
    }
    return std::string("(") + compute_type(to) + ")" + s;
  }
  if (to == DType::kI64) return "(long long)(" + v + ")";
  return round_expr(to, v);
}

}  // namespace fstitch
