#include "output_check.h"

#include <math.h>

#include "dtype_values.h"

example_tolerance example_output_tolerance(fst_dtype dtype, int through_low_precision) {
  example_tolerance tolerance = {1, 0.0, 0.0};
  if (!example_dtype_is_float(dtype)) return tolerance;
  tolerance.exact = 0;
  tolerance.l2 = (dtype == FST_F16 || dtype == FST_BF16 || through_low_precision) ? 1e-2 : 1e-5;
  tolerance.max_over_rms = 10 * tolerance.l2;
  return tolerance;
}

/* Non-finite references must be matched exactly: the same NaN-ness, the same infinity. */
static int same_non_finite(double got, double want) {
  if (isnan(want)) return isnan(got);
  return got == want;
}

static void compare_exact(fst_dtype dtype, const void* got, const void* want, size_t count,
                          example_comparison* out) {
  size_t i;
  for (i = 0; i < count; ++i) {
    const int64_t g = example_integer_element(dtype, got, i);
    const int64_t w = example_integer_element(dtype, want, i);
    if (g != w) {
      if (out->mismatches++ == 0) {
        out->first_mismatch = i;
        out->got_value = (double)g;
        out->want_value = (double)w;
      }
    }
  }
  out->ok = out->mismatches == 0;
}

static void compare_float(fst_dtype dtype, const void* got, const void* want, size_t count,
                          const example_tolerance* tolerance, example_comparison* out) {
  double diff2 = 0, want2 = 0, largest = 0;
  size_t finite = 0, largest_at = 0, i;
  for (i = 0; i < count; ++i) {
    const double g = example_float_element(dtype, got, i);
    const double w = example_float_element(dtype, want, i);
    double d;
    if (!isfinite(w) || !isfinite(g)) {
      if (!isfinite(w) && same_non_finite(g, w)) continue;
      if (out->mismatches++ == 0) {
        out->first_mismatch = i;
        out->got_value = g;
        out->want_value = w;
      }
      continue;
    }
    d = fabs(g - w);
    diff2 += d * d;
    want2 += w * w;
    ++finite;
    if (d > largest) {
      largest = d;
      largest_at = i;
    }
  }
  out->l2_error = sqrt(diff2) / fmax(sqrt(want2), 1e-30);
  out->max_over_rms = finite > 0 ? largest / fmax(sqrt(want2 / (double)finite), 1e-30) : 0.0;
  if (out->mismatches == 0) {
    out->first_mismatch = largest_at;
    out->got_value = example_float_element(dtype, got, largest_at);
    out->want_value = example_float_element(dtype, want, largest_at);
  }
  out->ok =
      out->mismatches == 0 && out->l2_error < tolerance->l2 && out->max_over_rms < tolerance->max_over_rms;
}

void example_compare_output(fst_dtype dtype, const void* got, const void* want, size_t count,
                            const example_tolerance* tolerance, example_comparison* out) {
  out->ok = 0;
  out->l2_error = 0;
  out->max_over_rms = 0;
  out->mismatches = 0;
  out->first_mismatch = 0;
  out->got_value = 0;
  out->want_value = 0;
  if (tolerance->exact) {
    compare_exact(dtype, got, want, count, out);
  } else {
    compare_float(dtype, got, want, count, tolerance, out);
  }
}
