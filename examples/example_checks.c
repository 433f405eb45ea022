/*
 * Checks of the pieces fstitch-run judges with: the f16/bf16 conversions, the output
 * comparison and its tolerances, the low-precision dependency scan of printed graphs, and
 * the error measures. Expected values are written out by hand (IEEE bit patterns, exact
 * sums), not computed by the code under test. Prints "example checks: OK".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dtype_values.h"
#include "example_util.h"
#include "graph_precision.h"
#include "output_check.h"

static int failures = 0;

#define EXPECT(condition)                                                      \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static float float_from_bits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

static void check_f16(void) {
  EXPECT(example_f16_bits(1.0f) == 0x3C00);
  EXPECT(example_f16_bits(-2.0f) == 0xC000);
  EXPECT(example_f16_bits(0.1f) == 0x2E66);     /* 0.0999755859375 */
  EXPECT(example_f16_bits(65504.0f) == 0x7BFF); /* the largest finite */
  EXPECT(example_f16_bits(65519.0f) == 0x7BFF); /* below the midpoint to 65536 */
  EXPECT(example_f16_bits(65520.0f) == 0x7C00); /* the midpoint: ties to even, which is infinity */
  EXPECT(example_f16_bits(1e10f) == 0x7C00);
  EXPECT(example_f16_bits(-INFINITY) == 0xFC00);
  EXPECT(example_f16_bits(ldexpf(1.0f, -24)) == 0x0001);        /* the smallest subnormal */
  EXPECT(example_f16_bits(ldexpf(1.0f, -25)) == 0x0000);        /* half of it: ties to even 0 */
  EXPECT(example_f16_bits(ldexpf(3.0f, -26)) == 0x0001);        /* 0.75 of it rounds up */
  EXPECT(example_f16_bits(ldexpf(3.0f, -25)) == 0x0002);        /* 1.5 units: ties to even 2 */
  EXPECT(example_f16_bits(ldexpf(1023.0f, -24)) == 0x03FF);     /* the largest subnormal */
  EXPECT(example_f16_bits(ldexpf(2047.0f, -25)) == 0x0400);     /* rounds up into the normals */
  EXPECT(example_f16_bits(1.0f + ldexpf(1.0f, -11)) == 0x3C00); /* tie between 1 and 1+2^-10: even */
  EXPECT(example_f16_bits(1.0f + ldexpf(3.0f, -11)) == 0x3C02); /* tie, the upper one is even */
  EXPECT(example_f16_bits(-0.0f) == 0x8000);
  {
    const uint16_t nan_bits = example_f16_bits(NAN);
    EXPECT((nan_bits & 0x7C00) == 0x7C00 && (nan_bits & 0x03FF) != 0);
  }
  EXPECT(example_f16_value(0x3C00) == 1.0);
  EXPECT(example_f16_value(0x0001) == ldexp(1.0, -24));
  EXPECT(example_f16_value(0x7BFF) == 65504.0);
  EXPECT(example_f16_value(0xC000) == -2.0);
  EXPECT(isinf(example_f16_value(0xFC00)) && example_f16_value(0xFC00) < 0);
  EXPECT(isnan(example_f16_value(0x7E00)));
}

static void check_bf16(void) {
  EXPECT(example_bf16_bits(1.0f) == 0x3F80);
  EXPECT(example_bf16_bits(float_from_bits(0x3F808000u)) == 0x3F80); /* tie: even */
  EXPECT(example_bf16_bits(float_from_bits(0x3F818000u)) == 0x3F82); /* tie: even is up */
  EXPECT(example_bf16_bits(float_from_bits(0x3F808001u)) == 0x3F81); /* above the tie */
  EXPECT(example_bf16_bits(float_from_bits(0x7F7FFFFFu)) == 0x7F80); /* FLT_MAX overflows */
  EXPECT(example_bf16_bits(float_from_bits(0x7F7F7FFFu)) == 0x7F7F);
  EXPECT(example_bf16_bits(float_from_bits(0x00000001u)) == 0x0000); /* a float subnormal */
  {
    /* A NaN whose payload sits in the dropped bits must stay a NaN. */
    const uint16_t nan_bits = example_bf16_bits(float_from_bits(0x7F800001u));
    EXPECT((nan_bits & 0x7F80) == 0x7F80 && (nan_bits & 0x007F) != 0);
  }
  EXPECT(example_bf16_value(0x3F80) == 1.0);
  EXPECT(example_bf16_value(0xC0A0) == -5.0);
}

static void check_random_data(void) {
  example_rng a, b;
  uint16_t halves[256];
  int8_t small[256];
  uint8_t flags[256];
  int seen_true = 0, seen_false = 0, i;
  double lowest = 1, highest = -1;
  example_rng_seed(&a, 5);
  example_rng_seed(&b, 5);
  for (i = 0; i < 1000; ++i) EXPECT(example_rng_next(&a) == example_rng_next(&b));
  for (i = 0; i < 10000; ++i) {
    const double u = example_rng_uniform(&a);
    lowest = fmin(lowest, u);
    highest = fmax(highest, u);
  }
  EXPECT(lowest >= -1 && lowest < -0.99 && highest < 1 && highest > 0.99);
  example_fill_random(FST_F16, halves, 256, &a);
  for (i = 0; i < 256; ++i) EXPECT(fabs(example_f16_value(halves[i])) <= 1.0);
  example_fill_random(FST_I8, small, 256, &a);
  for (i = 0; i < 256; ++i) EXPECT(small[i] >= -8 && small[i] <= 8);
  example_fill_random(FST_BOOL, flags, 256, &a);
  for (i = 0; i < 256; ++i) {
    EXPECT(flags[i] <= 1);
    seen_true |= flags[i] == 1;
    seen_false |= flags[i] == 0;
  }
  EXPECT(seen_true && seen_false);
}

static void check_measures(void) {
  const double want[2] = {3, 4};
  const double got[2] = {3, 4.5};
  const double with_nan[2] = {3, NAN};
  EXPECT(fabs(example_relative_l2(got, want, 2) - 0.1) < 1e-15); /* |(0, 0.5)| / |(3, 4)| */
  EXPECT(isnan(example_relative_l2(with_nan, want, 2)));
  EXPECT(example_max_abs_error(got, want, 2) == 0.5);
  EXPECT(isnan(example_max_abs_error(with_nan, want, 2)));
}

static void check_comparison(void) {
  example_comparison result;
  const example_tolerance f32 = example_output_tolerance(FST_F32, 0);
  const example_tolerance f32_through_half = example_output_tolerance(FST_F32, 1);
  const example_tolerance bf16 = example_output_tolerance(FST_BF16, 0);
  const example_tolerance i32 = example_output_tolerance(FST_I32, 0);
  EXPECT(!f32.exact && f32.l2 == 1e-5 && f32.max_over_rms == 1e-4);
  EXPECT(!f32_through_half.exact && f32_through_half.l2 == 1e-2);
  EXPECT(!bf16.exact && bf16.l2 == 1e-2 && bf16.max_over_rms == 1e-1);
  EXPECT(i32.exact && example_output_tolerance(FST_BOOL, 0).exact);
  {
    const int32_t want[4] = {1, 2, 3, 4};
    const int32_t got[4] = {1, 2, 5, 4};
    example_compare_output(FST_I32, want, want, 4, &i32, &result);
    EXPECT(result.ok && result.mismatches == 0);
    example_compare_output(FST_I32, got, want, 4, &i32, &result);
    EXPECT(!result.ok && result.mismatches == 1 && result.first_mismatch == 2 && result.got_value == 5 &&
           result.want_value == 3);
  }
  {
    const uint8_t want[3] = {0, 1, 1};
    const uint8_t got[3] = {0, 1, 0xFF}; /* a byte that is not 0 or 1 is not the reference's bool */
    example_compare_output(FST_BOOL, got, want, 3, &i32, &result);
    EXPECT(!result.ok && result.first_mismatch == 2);
  }
  {
    /* Relative L2 of (2^-20, 0, 0) against (1, 1, 1): 2^-20 / sqrt(3) = 5.5e-7. */
    const float want[3] = {1, 1, 1};
    float got[3] = {1, 1, 1};
    got[0] = 1.0f + ldexpf(1.0f, -20);
    example_compare_output(FST_F32, got, want, 3, &f32, &result);
    EXPECT(result.ok && fabs(result.l2_error - ldexp(1.0, -20) / sqrt(3.0)) < 1e-15);
    got[0] = 1.001f; /* 5.8e-4: over the f32 limit, under the f16 one */
    example_compare_output(FST_F32, got, want, 3, &f32, &result);
    EXPECT(!result.ok && result.first_mismatch == 0);
    example_compare_output(FST_F32, got, want, 3, &f32_through_half, &result);
    EXPECT(result.ok);
    got[0] = NAN; /* NaN where the reference is finite never passes */
    example_compare_output(FST_F32, got, want, 3, &f32_through_half, &result);
    EXPECT(!result.ok && result.mismatches == 1);
  }
  {
    /* One wrong element among many: small in L2, caught by the largest error over the RMS. */
    float want[10000], got[10000];
    int i;
    for (i = 0; i < 10000; ++i) want[i] = got[i] = 1.0f;
    got[1234] = 1.0002f; /* L2 2e-6, largest error 2e-4 of the RMS */
    example_compare_output(FST_F32, got, want, 10000, &f32, &result);
    EXPECT(!result.ok && result.l2_error < 1e-5 && result.first_mismatch == 1234);
  }
  {
    const float want[3] = {NAN, INFINITY, 2};
    float got[3] = {NAN, INFINITY, 2};
    example_compare_output(FST_F32, got, want, 3, &f32, &result);
    EXPECT(result.ok);
    got[1] = -INFINITY;
    example_compare_output(FST_F32, got, want, 3, &f32, &result);
    EXPECT(!result.ok && result.first_mismatch == 1);
    got[1] = INFINITY;
    got[0] = 0; /* a number where the reference is NaN */
    example_compare_output(FST_F32, got, want, 3, &f32, &result);
    EXPECT(!result.ok && result.first_mismatch == 0);
  }
  {
    const uint16_t want[2] = {0x3C00, 0x4000}; /* f16 1, 2 */
    const uint16_t got[2] = {0x3C01, 0x4000};  /* 1 + 2^-10: relative L2 4.4e-4 */
    example_compare_output(FST_F16, got, want, 2, &bf16, &result);
    EXPECT(result.ok && result.l2_error > 4e-4 && result.l2_error < 5e-4);
  }
}

static void check_low_precision_scan(void) {
  static const char printed[] =
      "fstitch.graph 1\n"
      "%0 = input \"x %9\" : bf16[4,8]\n" /* a name that looks like an operand */
      "%1 = input \"b\" : f32[8]\n"
      "%2 = cast %0 : f32[4,8]\n"
      "%3 = broadcast %1 : f32[4,8]\n"
      "%4 = add %2, %3 : f32[4,8]\n"
      "%5 = cast %4 : f16[4,8]\n"
      "%6 = cast %5 : f32[4,8]\n"
      "%7 = reduce_max %4 axes=[1] keepdims=false : f32[4]\n"
      "%8 = constant 0.5 : f16\n"
      "output \"rounded\" = %5\n"
      "output \"through f16\" = %6\n"
      "output \"from the bf16 input\" = %7\n"
      "output \"the input\" = %0\n"
      "output \"constant\" = %8\n";
  unsigned char flags[5];
  EXPECT(example_low_precision_outputs(printed, 5, flags) == 0);
  EXPECT(flags[0] == 1 && flags[1] == 1 && flags[2] == 0 && flags[3] == 0 && flags[4] == 0);
  /* Text that does not read as printed text: every output on the safe side. */
  EXPECT(example_low_precision_outputs("%0 = input \"x\" f32[4]\noutput \"y\" = %0\n", 1, flags) == -1);
  EXPECT(flags[0] == 1);
  EXPECT(example_low_precision_outputs(printed, 4, flags) == -1); /* one output more than said */
}

int main(void) {
  check_f16();
  check_bf16();
  check_random_data();
  check_measures();
  check_comparison();
  check_low_precision_scan();
  if (failures != 0) {
    fprintf(stderr, "example checks: %d failure(s)\n", failures);
    return 1;
  }
  printf("example checks: OK\n");
  return 0;
}
