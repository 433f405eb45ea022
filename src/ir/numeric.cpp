#include "ir/numeric.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace fstitch {
namespace {

// Rounds a finite |x| to a binary format with `mantissa_bits` explicit bits, exponent bias
// `bias` and `exponent_bits`; returns the bit pattern without the sign. Exact: scaling by
// powers of two is exact and rint rounds to nearest even.
uint32_t round_magnitude(double a, int mantissa_bits, int exponent_bits, int bias) {
  const int max_biased = (1 << exponent_bits) - 1;  // all ones: inf / nan
  const int min_exp = 1 - bias;                     // exponent of the smallest normal
  const uint32_t inf_bits = static_cast<uint32_t>(max_biased) << mantissa_bits;
  if (std::isinf(a)) return inf_bits;
  if (a == 0) return 0;
  int e2 = 0;
  std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  int e = e2 - 1;      // a in [2^e, 2^(e+1))
  if (e < min_exp) {
    // Subnormal: quantum 2^(min_exp - mantissa_bits). m may round up to the smallest normal,
    // whose encoding is exactly m.
    double m = std::rint(std::ldexp(a, mantissa_bits - min_exp));
    return static_cast<uint32_t>(m);
  }
  double m = std::rint(std::ldexp(a, mantissa_bits - e));  // in [2^mb, 2^(mb+1)]
  if (m == std::ldexp(1.0, mantissa_bits + 1)) {
    m = std::ldexp(1.0, mantissa_bits);
    ++e;
  }
  int biased = e + bias;
  if (biased >= max_biased) return inf_bits;
  uint32_t frac = static_cast<uint32_t>(m) - (1u << mantissa_bits);
  return (static_cast<uint32_t>(biased) << mantissa_bits) | frac;
}

double decode(uint32_t bits, int mantissa_bits, int exponent_bits, int bias) {
  const uint32_t sign = bits >> (mantissa_bits + exponent_bits);
  const uint32_t exp = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const uint32_t frac = bits & ((1u << mantissa_bits) - 1);
  double value;
  if (exp == (1u << exponent_bits) - 1) {
    value = frac != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(frac), 1 - bias - mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(frac + (1u << mantissa_bits)),
                       static_cast<int>(exp) - bias - mantissa_bits);
  }
  return sign ? -value : value;
}

uint16_t encode16(double x, int mantissa_bits, int exponent_bits, int bias, uint16_t quiet_nan) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return static_cast<uint16_t>(sign | quiet_nan);
  return static_cast<uint16_t>(sign | round_magnitude(std::fabs(x), mantissa_bits, exponent_bits, bias));
}

// int64 -> double for a later rounding to a narrower format: exact below 2^53; above, the
// discarded low bits survive as a sticky bit so that the single rounding sees them.
double i64_to_f64_for_rounding(int64_t x) {
  uint64_t mag = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  int shift = 0;
  while ((mag >> shift) >= (uint64_t{1} << 53)) ++shift;
  if (shift == 0) return static_cast<double>(x);
  uint64_t kept = mag >> shift;
  if (mag & ((uint64_t{1} << shift) - 1)) kept |= 1;
  const double v = std::ldexp(static_cast<double>(kept), shift);
  return x < 0 ? -v : v;
}

}  // namespace

uint16_t f64_to_f16_bits(double x) {
  return encode16(x, 10, 5, 15, 0x7E00);
}
double f16_bits_to_f64(uint16_t bits) {
  return decode(bits, 10, 5, 15);
}
uint16_t f64_to_bf16_bits(double x) {
  return encode16(x, 7, 8, 127, 0x7FC0);
}
double bf16_bits_to_f64(uint16_t bits) {
  return decode(bits, 7, 8, 127);
}

double round_to_float_dtype(double x, DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return x;
    case DType::kF32:
      return static_cast<double>(static_cast<float>(x));
    case DType::kF16:
      return f16_bits_to_f64(f64_to_f16_bits(x));
    case DType::kBF16:
      return bf16_bits_to_f64(f64_to_bf16_bits(x));
    default:
      return x;
  }
}

int64_t wrap_to_integer_dtype(int64_t x, DType dtype) {
  switch (dtype) {
    case DType::kI8:
      return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(x)));
    case DType::kU8:
      return static_cast<uint8_t>(static_cast<uint64_t>(x));
    case DType::kI32:
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
    case DType::kBool:
      return x != 0 ? 1 : 0;
    default:
      return x;
  }
}

Scalar scalar_from_f64(double x, DType to) {
  Scalar s;
  if (is_float(to)) {
    s.f = round_to_float_dtype(x, to);
  } else if (is_bool(to)) {
    s.i = x != 0 ? 1 : 0;  // NaN != 0
  } else if (std::isnan(x)) {
    s.i = 0;
  } else {
    double t = std::trunc(x);
    const double lo = static_cast<double>(integer_min(to));
    const double hi = static_cast<double>(integer_max(to));
    if (t <= lo) {
      s.i = integer_min(to);
    } else if (t >= hi) {
      s.i = integer_max(to);  // hi of i64 rounds up to 2^63 in double, so >= catches it
    } else {
      s.i = static_cast<int64_t>(t);
    }
  }
  return s;
}

Scalar scalar_from_i64(int64_t x, DType to) {
  Scalar s;
  if (is_float(to)) {
    if (to == DType::kF32) {
      s.f = static_cast<double>(static_cast<float>(x));
    } else if (to == DType::kF64) {
      s.f = static_cast<double>(x);
    } else {
      s.f = round_to_float_dtype(i64_to_f64_for_rounding(x), to);
    }
  } else {
    s.i = wrap_to_integer_dtype(x, to);
  }
  return s;
}

Scalar cast_scalar(Scalar x, DType from, DType to) {
  return is_float(from) ? scalar_from_f64(x.f, to) : scalar_from_i64(x.i, to);
}

Scalar load_scalar(const void* base, int64_t index, DType dtype) {
  const unsigned char* p =
      static_cast<const unsigned char*>(base) + index * static_cast<int64_t>(dtype_size(dtype));
  Scalar s;
  switch (dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      s.f = v;
      break;
    }
    case DType::kF64: {
      std::memcpy(&s.f, p, 8);
      break;
    }
    case DType::kF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      s.f = f16_bits_to_f64(v);
      break;
    }
    case DType::kBF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      s.f = bf16_bits_to_f64(v);
      break;
    }
    case DType::kI8: {
      int8_t v;
      std::memcpy(&v, p, 1);
      s.i = v;
      break;
    }
    case DType::kU8: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      s.i = v;
      break;
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      s.i = v;
      break;
    }
    case DType::kI64: {
      std::memcpy(&s.i, p, 8);
      break;
    }
    case DType::kBool: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      s.i = v != 0 ? 1 : 0;
      break;
    }
  }
  return s;
}

void store_scalar(void* base, int64_t index, DType dtype, Scalar value) {
  unsigned char* p = static_cast<unsigned char*>(base) + index * static_cast<int64_t>(dtype_size(dtype));
  switch (dtype) {
    case DType::kF32: {
      float v = static_cast<float>(value.f);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::kF64: {
      std::memcpy(p, &value.f, 8);
      break;
    }
    case DType::kF16: {
      uint16_t v = f64_to_f16_bits(value.f);
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kBF16: {
      uint16_t v = f64_to_bf16_bits(value.f);
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kI8: {
      int8_t v = static_cast<int8_t>(value.i);
      std::memcpy(p, &v, 1);
      break;
    }
    case DType::kU8: {
      uint8_t v = static_cast<uint8_t>(value.i);
      std::memcpy(p, &v, 1);
      break;
    }
    case DType::kI32: {
      int32_t v = static_cast<int32_t>(value.i);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::kI64: {
      std::memcpy(p, &value.i, 8);
      break;
    }
    case DType::kBool: {
      uint8_t v = value.i != 0 ? 1 : 0;
      std::memcpy(p, &v, 1);
      break;
    }
  }
}

}  // namespace fstitch
