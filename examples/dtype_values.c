#include "dtype_values.h"

#include <math.h>
#include <string.h>

static uint32_t float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

/* Shifts `magnitude` right by `shift` (1..31) and rounds the dropped bits to nearest even. */
static uint32_t shift_round_even(uint32_t magnitude, unsigned shift) {
  const uint32_t kept = magnitude >> shift;
  const uint32_t dropped = magnitude & ((UINT32_C(1) << shift) - 1);
  const uint32_t half = UINT32_C(1) << (shift - 1);
  return kept + (dropped > half || (dropped == half && (kept & 1)) ? 1 : 0);
}

uint16_t example_f16_bits(float value) {
  const uint32_t bits = float_bits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xFFu;
  const uint32_t mantissa = bits & 0x7FFFFFu;
  const int32_t half_exponent = (int32_t)exponent - 127 + 15;
  if (exponent == 0xFFu) { /* infinity, or a NaN kept quiet */
    return (uint16_t)(sign | 0x7C00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0));
  }
  if (half_exponent >= 31) return (uint16_t)(sign | 0x7C00u);
  if (half_exponent <= 0) {
    /* A binary16 subnormal counts units of 2^-24: the 24-bit significand shifted by 14 - e.
     * Below 2^-25 everything rounds to zero. A carry into the exponent field is right. */
    if (half_exponent < -10) return (uint16_t)sign;
    return (uint16_t)(sign | shift_round_even(mantissa | 0x800000u, (unsigned)(14 - half_exponent)));
  }
  /* Normal: a carry out of the mantissa bumps the exponent, up to infinity, as it should. */
  return (uint16_t)(sign | shift_round_even(((uint32_t)half_exponent << 23) | mantissa, 13));
}

uint16_t example_bf16_bits(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu) != 0) {
    return (uint16_t)((bits >> 16) | 0x40u); /* a quiet NaN, whatever the dropped bits were */
  }
  return (uint16_t)(shift_round_even(bits, 16));
}

double example_f16_value(uint16_t bits) {
  const unsigned exponent = (bits >> 10) & 0x1Fu;
  const unsigned mantissa = bits & 0x3FFu;
  double magnitude;
  if (exponent == 0) {
    magnitude = ldexp((double)mantissa, -24);
  } else if (exponent == 0x1F) {
    magnitude = mantissa != 0 ? NAN : INFINITY;
  } else {
    magnitude = ldexp((double)(mantissa | 0x400u), (int)exponent - 25);
  }
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

double example_bf16_value(uint16_t bits) {
  const uint32_t wide = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &wide, sizeof value);
  return value;
}

int example_dtype_is_float(fst_dtype dtype) {
  return dtype == FST_F32 || dtype == FST_F16 || dtype == FST_BF16 || dtype == FST_F64;
}

void example_fill_random(fst_dtype dtype, void* data, size_t count, example_rng* rng) {
  size_t i;
  for (i = 0; i < count; ++i) {
    switch (dtype) {
      case FST_F32:
        ((float*)data)[i] = (float)example_rng_uniform(rng);
        break;
      case FST_F16:
        ((uint16_t*)data)[i] = example_f16_bits((float)example_rng_uniform(rng));
        break;
      case FST_BF16:
        ((uint16_t*)data)[i] = example_bf16_bits((float)example_rng_uniform(rng));
        break;
      case FST_F64:
        ((double*)data)[i] = example_rng_uniform(rng);
        break;
      case FST_I8:
        ((int8_t*)data)[i] = (int8_t)example_rng_int(rng, -8, 8);
        break;
      case FST_I32:
        ((int32_t*)data)[i] = (int32_t)example_rng_int(rng, -8, 8);
        break;
      case FST_I64:
        ((int64_t*)data)[i] = example_rng_int(rng, -8, 8);
        break;
      case FST_U8:
        ((uint8_t*)data)[i] = (uint8_t)example_rng_int(rng, 0, 16);
        break;
      case FST_BOOL:
        ((uint8_t*)data)[i] = (uint8_t)example_rng_int(rng, 0, 1);
        break;
    }
  }
}

double example_float_element(fst_dtype dtype, const void* data, size_t index) {
  switch (dtype) {
    case FST_F32:
      return ((const float*)data)[index];
    case FST_F16:
      return example_f16_value(((const uint16_t*)data)[index]);
    case FST_BF16:
      return example_bf16_value(((const uint16_t*)data)[index]);
    case FST_F64:
      return ((const double*)data)[index];
    case FST_I8:
    case FST_I32:
    case FST_I64:
    case FST_U8:
    case FST_BOOL:
      return (double)example_integer_element(dtype, data, index);
  }
  return NAN; /* not a dtype */
}

int64_t example_integer_element(fst_dtype dtype, const void* data, size_t index) {
  switch (dtype) {
    case FST_I8:
      return ((const int8_t*)data)[index];
    case FST_I32:
      return ((const int32_t*)data)[index];
    case FST_I64:
      return ((const int64_t*)data)[index];
    case FST_U8:
    case FST_BOOL:
      return ((const uint8_t*)data)[index];
    case FST_F32:
    case FST_F16:
    case FST_BF16:
    case FST_F64:
      break;
  }
  return 0; /* not an integer dtype */
}
