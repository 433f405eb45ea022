// Tests of the exact scalar conversions in src/ir/numeric.cpp against references written
// here: formula decoding, table-search rounding, and the classic float32 bit manipulations.
#include "ir/numeric.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "ref/ref_test_util.hpp"

namespace fstitch {
namespace {

using reftest::bf16_value;
using reftest::f16_value;

bool is_f16_nan(uint16_t bits) {
  return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
}
bool is_bf16_nan(uint16_t bits) {
  return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
}

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// float32 -> f16, round to nearest even, by integer manipulation of the float32 encoding.
uint16_t f32_to_f16_by_bits(float f) {
  const uint32_t u = f32_bits(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t exponent = (u >> 23) & 0xFF;
  uint32_t mantissa = u & 0x7FFFFF;
  if (exponent == 0xFF) return static_cast<uint16_t>(sign | (mantissa ? 0x7E00 : 0x7C00));
  const int e = static_cast<int>(exponent) - 127;  // unbiased
  if (e > 15) return static_cast<uint16_t>(sign | 0x7C00);
  if (exponent == 0) return sign;  // f32 subnormals are far below half of f16's smallest subnormal
  mantissa |= 0x800000;            // 24 significant bits
  // Bits to drop: 13 for normal f16 results, more below f16's normal range.
  const int shift = e >= -14 ? 13 : 13 + (-14 - e);
  if (shift > 24) return sign;  // below half of the smallest subnormal
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
  uint32_t bits;
  if (e >= -14) {
    // rounded is in [2^10, 2^11]; carrying into 2^11 bumps the exponent, which the addition does.
    bits = (static_cast<uint32_t>(e + 15) << 10) + (rounded - 0x400);
  } else {
    bits = rounded;  // subnormal; a carry to 0x400 is exactly the smallest normal
  }
  if (bits >= 0x7C00) bits = 0x7C00;
  return static_cast<uint16_t>(sign | bits);
}

// float32 -> bf16, round to nearest even: the well-known add-and-truncate.
uint16_t f32_to_bf16_by_bits(float f) {
  const uint32_t u = f32_bits(f);
  if (std::isnan(f)) return static_cast<uint16_t>(((u >> 16) & 0x8000) | 0x7FC0);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

TEST(NumericF16, EveryPatternDecodesAndReencodes) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const double value = f16_bits_to_f64(bits);
    if (is_f16_nan(bits)) {
      EXPECT_TRUE(std::isnan(value)) << std::hex << b;
      // NaN payloads normalize to the quiet NaN, keeping the sign.
      EXPECT_EQ(f64_to_f16_bits(value), (bits & 0x8000) | 0x7E00) << std::hex << b;
      continue;
    }
    const double expected = f16_value(bits);
    EXPECT_TRUE(reftest::same_value(value, expected)) << std::hex << b << ": " << value << " vs " << expected;
    EXPECT_EQ(f64_to_f16_bits(value), bits) << std::hex << b;
  }
}

TEST(NumericBF16, EveryPatternDecodesAndReencodes) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const double value = bf16_bits_to_f64(bits);
    if (is_bf16_nan(bits)) {
      EXPECT_TRUE(std::isnan(value)) << std::hex << b;
      EXPECT_EQ(f64_to_bf16_bits(value), (bits & 0x8000) | 0x7FC0) << std::hex << b;
      continue;
    }
    const double expected = bf16_value(bits);
    EXPECT_TRUE(reftest::same_value(value, expected)) << std::hex << b << ": " << value << " vs " << expected;
    EXPECT_EQ(f64_to_bf16_bits(value), bits) << std::hex << b;
  }
}

// Every midpoint between neighbouring finite values is a tie (to the even pattern); the
// doubles just beside it round to the nearer neighbour.
template <class Encode>
void check_midpoints(uint16_t max_finite, double (*decode)(uint16_t), Encode encode) {
  for (uint32_t p = 0; p < max_finite; ++p) {
    const auto lo = static_cast<uint16_t>(p);
    const auto hi = static_cast<uint16_t>(p + 1);
    const double mid = (decode(lo) + decode(hi)) / 2;
    const uint16_t even = (lo % 2 == 0) ? lo : hi;
    ASSERT_EQ(encode(mid), even) << std::hex << p;
    ASSERT_EQ(encode(std::nextafter(mid, 0.0)), lo) << std::hex << p;
    ASSERT_EQ(encode(std::nextafter(mid, reftest::kInf)), hi) << std::hex << p;
    ASSERT_EQ(encode(-mid), 0x8000 | even) << std::hex << p;
  }
}

TEST(NumericF16, EveryMidpointTiesToEven) {
  check_midpoints(0x7BFF, f16_value, f64_to_f16_bits);
}
TEST(NumericBF16, EveryMidpointTiesToEven) {
  check_midpoints(0x7F7F, bf16_value, f64_to_bf16_bits);
}

// Doubles spread over f16's whole range and beyond, with full 52-bit mantissas.
double random_double(std::mt19937_64& rng, int min_exp, int max_exp) {
  std::uniform_int_distribution<int> exponent(min_exp, max_exp);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  double v = std::ldexp(mantissa(rng), exponent(rng));
  return (rng() & 1) ? -v : v;
}

TEST(NumericF16, RandomDoublesMatchTableSearch) {
  std::mt19937_64 rng(20240601);
  for (int k = 0; k < 200000; ++k) {
    const double v = random_double(rng, -27, 17);
    ASSERT_EQ(f64_to_f16_bits(v), reftest::f16_bits(v)) << v;
  }
}

TEST(NumericBF16, RandomDoublesMatchTableSearch) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 200000; ++k) {
    const double v = random_double(rng, -136, 129);
    ASSERT_EQ(f64_to_bf16_bits(v), reftest::bf16_bits(v)) << v;
  }
}

TEST(NumericF16, RandomFloatsMatchBitManipulation) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int k = 0; k < 1000000; ++k) {
    // Random float32 patterns restricted to exponents near f16's range, plus any pattern.
    uint32_t u = any_bits(rng);
    if (k % 2 == 0) u = (u & 0x807FFFFF) | ((100u + u % 45u) << 23);
    float f;
    std::memcpy(&f, &u, sizeof f);
    ASSERT_EQ(f64_to_f16_bits(static_cast<double>(f)), f32_to_f16_by_bits(f)) << std::hex << u;
  }
}

TEST(NumericBF16, RandomFloatsMatchBitManipulation) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int k = 0; k < 1000000; ++k) {
    const uint32_t u = any_bits(rng);
    float f;
    std::memcpy(&f, &u, sizeof f);
    ASSERT_EQ(f64_to_bf16_bits(static_cast<double>(f)), f32_to_bf16_by_bits(f)) << std::hex << u;
  }
}

TEST(NumericF16, KnownPatterns) {
  EXPECT_EQ(f64_to_f16_bits(1.0 / 3.0), 0x3555);
  EXPECT_EQ(f64_to_f16_bits(65504.0), 0x7BFF);
  EXPECT_EQ(f64_to_f16_bits(65519.99), 0x7BFF);
  EXPECT_EQ(f64_to_f16_bits(65520.0), 0x7C00);
  EXPECT_EQ(f64_to_f16_bits(-65520.0), 0xFC00);
  EXPECT_EQ(f64_to_f16_bits(1e300), 0x7C00);
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(1.0, -25)), 0x0000);  // half of it: tie to even (zero)
  EXPECT_EQ(f64_to_f16_bits(-std::ldexp(1.0, -25)), 0x8000);
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(1.0 + 1e-9, -25)), 0x0001);  // just above half
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(3.0, -25)), 0x0002);         // 1.5 quanta: tie to even
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(1.0, -14)), 0x0400);         // smallest normal
  EXPECT_EQ(f64_to_f16_bits(std::ldexp(1023.5, -24)), 0x0400);      // rounds up into the normals
  EXPECT_EQ(f64_to_f16_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);   // tie to even
  EXPECT_EQ(f64_to_f16_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above a tie, by less than float32 can hold: a detour through f32 would get 0x3C00.
  EXPECT_EQ(f64_to_f16_bits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01);
  EXPECT_EQ(f64_to_f16_bits(-0.0), 0x8000);
  EXPECT_EQ(f64_to_f16_bits(0.0), 0x0000);
  EXPECT_TRUE(is_f16_nan(f64_to_f16_bits(reftest::kNaN)));
  EXPECT_EQ(f64_to_f16_bits(-reftest::kInf), 0xFC00);
  EXPECT_EQ(f16_bits_to_f64(0x7BFF), 65504.0);
  EXPECT_EQ(f16_bits_to_f64(0x0001), std::ldexp(1.0, -24));
}

TEST(NumericBF16, KnownPatterns) {
  EXPECT_EQ(f64_to_bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(f64_to_bf16_bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);      // tie to even
  EXPECT_EQ(f64_to_bf16_bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);  // tie to even: 1 + 2^-6
  EXPECT_EQ(bf16_bits_to_f64(0x3F82), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(f64_to_bf16_bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 0x3F81);
  EXPECT_EQ(f64_to_bf16_bits(1.0 / 3.0), 0x3EAB);
  EXPECT_EQ(f64_to_bf16_bits(-0.0), 0x8000);
  EXPECT_EQ(f64_to_bf16_bits(3.3895313892515355e38), 0x7F7F);  // largest finite
  EXPECT_EQ(f64_to_bf16_bits(3.4e38), 0x7F80);                 // past the overflow midpoint
  EXPECT_EQ(f64_to_bf16_bits(std::ldexp(1.0, -133)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f64_to_bf16_bits(std::ldexp(1.0, -134)), 0x0000);  // half of it: tie to even
  EXPECT_TRUE(is_bf16_nan(f64_to_bf16_bits(reftest::kNaN)));
}

TEST(NumericRound, FloatDtypes) {
  const double third = 1.0 / 3.0;
  EXPECT_EQ(round_to_float_dtype(third, DType::kF64), third);
  EXPECT_EQ(round_to_float_dtype(third, DType::kF32), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(round_to_float_dtype(third, DType::kF16), f16_value(0x3555));
  EXPECT_EQ(round_to_float_dtype(third, DType::kBF16), bf16_value(0x3EAB));
  EXPECT_EQ(round_to_float_dtype(16777217.0, DType::kF32), 16777216.0);
  EXPECT_EQ(round_to_float_dtype(1e39, DType::kF32), reftest::kInf);
  EXPECT_TRUE(std::isnan(round_to_float_dtype(reftest::kNaN, DType::kF16)));
}

TEST(NumericWrap, IntegerDtypes) {
  EXPECT_EQ(wrap_to_integer_dtype(300, DType::kI8), 44);
  EXPECT_EQ(wrap_to_integer_dtype(128, DType::kI8), -128);
  EXPECT_EQ(wrap_to_integer_dtype(-129, DType::kI8), 127);
  EXPECT_EQ(wrap_to_integer_dtype(-1, DType::kU8), 255);
  EXPECT_EQ(wrap_to_integer_dtype(256, DType::kU8), 0);
  EXPECT_EQ(wrap_to_integer_dtype(INT64_C(2147483648), DType::kI32), INT64_C(-2147483648));
  EXPECT_EQ(wrap_to_integer_dtype(INT64_C(0x1234567890), DType::kI32), INT64_C(0x34567890));
  EXPECT_EQ(wrap_to_integer_dtype(INT64_MIN, DType::kI64), INT64_MIN);
  EXPECT_EQ(wrap_to_integer_dtype(-7, DType::kBool), 1);
  EXPECT_EQ(wrap_to_integer_dtype(0, DType::kBool), 0);
}

TEST(NumericCast, FloatToIntegerTruncatesAndSaturates) {
  EXPECT_EQ(scalar_from_f64(3.9, DType::kI8).i, 3);
  EXPECT_EQ(scalar_from_f64(-3.9, DType::kI8).i, -3);
  EXPECT_EQ(scalar_from_f64(1000.0, DType::kI8).i, 127);
  EXPECT_EQ(scalar_from_f64(-1000.0, DType::kI8).i, -128);
  EXPECT_EQ(scalar_from_f64(-0.9, DType::kU8).i, 0);
  EXPECT_EQ(scalar_from_f64(-5.0, DType::kU8).i, 0);
  EXPECT_EQ(scalar_from_f64(255.9, DType::kU8).i, 255);
  EXPECT_EQ(scalar_from_f64(1e10, DType::kI32).i, INT32_MAX);
  EXPECT_EQ(scalar_from_f64(-2147483648.9, DType::kI32).i, INT32_MIN);
  EXPECT_EQ(scalar_from_f64(9.2233720368547758e18, DType::kI64).i, INT64_MAX);  // 2^63
  EXPECT_EQ(scalar_from_f64(-9.2233720368547758e18, DType::kI64).i, INT64_MIN);
  EXPECT_EQ(scalar_from_f64(std::ldexp(1.0, 63) - 1024.0, DType::kI64).i, INT64_C(9223372036854774784));
  EXPECT_EQ(scalar_from_f64(reftest::kInf, DType::kI64).i, INT64_MAX);
  EXPECT_EQ(scalar_from_f64(-reftest::kInf, DType::kI32).i, INT32_MIN);
  EXPECT_EQ(scalar_from_f64(reftest::kNaN, DType::kI32).i, 0);
  EXPECT_EQ(scalar_from_f64(reftest::kNaN, DType::kBool).i, 1);
  EXPECT_EQ(scalar_from_f64(-0.0, DType::kBool).i, 0);
  EXPECT_EQ(scalar_from_f64(0.25, DType::kBool).i, 1);
}

TEST(NumericCast, IntegerConversions) {
  EXPECT_EQ(scalar_from_i64(300, DType::kI8).i, 44);
  EXPECT_EQ(scalar_from_i64(-1, DType::kU8).i, 255);
  EXPECT_EQ(scalar_from_i64(2, DType::kBool).i, 1);
  EXPECT_EQ(scalar_from_i64(16777217, DType::kF32).f, 16777216.0);
  EXPECT_EQ(scalar_from_i64(16777219, DType::kF32).f, 16777220.0);  // tie to even
  EXPECT_EQ(scalar_from_i64(2049, DType::kF16).f, 2048.0);
  EXPECT_EQ(scalar_from_i64(2051, DType::kF16).f, 2052.0);
  EXPECT_EQ(scalar_from_i64(65520, DType::kF16).f, reftest::kInf);
  EXPECT_EQ(scalar_from_i64(257, DType::kBF16).f, 256.0);
  EXPECT_EQ(scalar_from_i64(INT64_MIN, DType::kF64).f, -9.2233720368547758e18);
  // int64 -> f32 rounds once, straight from the integer: 2^54 + 2^30 + 1 is just above the
  // tie between 2^54 and 2^54 + 2^31 (a detour through f64 would land on the tie and go down).
  EXPECT_EQ(scalar_from_i64(INT64_C(0x40000040000001), DType::kF32).f,
            std::ldexp(1.0, 54) + std::ldexp(1.0, 31));
  Scalar s;
  s.f = -7.5;
  EXPECT_EQ(cast_scalar(s, DType::kF32, DType::kI32).i, -7);
  s.i = 255;
  EXPECT_EQ(cast_scalar(s, DType::kU8, DType::kI8).i, -1);
}

TEST(NumericBuffers, LoadAndStore) {
  const uint8_t bools[] = {0, 1, 2, 0xFF};
  EXPECT_EQ(load_scalar(bools, 0, DType::kBool).i, 0);
  EXPECT_EQ(load_scalar(bools, 1, DType::kBool).i, 1);
  EXPECT_EQ(load_scalar(bools, 2, DType::kBool).i, 1);
  EXPECT_EQ(load_scalar(bools, 3, DType::kBool).i, 1);
  const uint16_t halves[] = {0x3C00, 0x3555, 0xFC00};
  EXPECT_EQ(load_scalar(halves, 1, DType::kF16).f, f16_value(0x3555));
  EXPECT_EQ(load_scalar(halves, 2, DType::kF16).f, -reftest::kInf);
  const int8_t bytes[] = {-128, 127};
  EXPECT_EQ(load_scalar(bytes, 0, DType::kI8).i, -128);
  const uint8_t ubytes[] = {200};
  EXPECT_EQ(load_scalar(ubytes, 0, DType::kU8).i, 200);

  uint16_t out16[2] = {0, 0};
  Scalar s;
  s.f = 1.0 / 3.0;
  store_scalar(out16, 1, DType::kBF16, s);
  EXPECT_EQ(out16[0], 0);
  EXPECT_EQ(out16[1], 0x3EAB);
  uint8_t out_bool[1] = {0xAA};
  s.i = 1;
  store_scalar(out_bool, 0, DType::kBool, s);
  EXPECT_EQ(out_bool[0], 1);
  int64_t out64[1] = {0};
  s.i = INT64_MIN;
  store_scalar(out64, 0, DType::kI64, s);
  EXPECT_EQ(out64[0], INT64_MIN);
}

}  // namespace
}  // namespace fstitch

namespace fstitch {
namespace {

TEST(NumericBF16, LargeInt64RoundsOnce) {
  // Converting through double first would round twice and give 2^60.
  EXPECT_EQ(scalar_from_i64((INT64_C(1) << 60) + (INT64_C(1) << 52) + 1, DType::kBF16).f,
            std::ldexp(1.0, 60) + std::ldexp(1.0, 53));
  EXPECT_EQ(scalar_from_i64(-((INT64_C(1) << 60) + (INT64_C(1) << 52) + 1), DType::kBF16).f,
            -(std::ldexp(1.0, 60) + std::ldexp(1.0, 53)));
  EXPECT_EQ(scalar_from_i64(INT64_MIN, DType::kBF16).f, -std::ldexp(1.0, 63));
}

}  // namespace
}  // namespace fstitch
