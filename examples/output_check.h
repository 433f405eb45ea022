/*
 * Judging one fused output against the reference evaluator's, with the tolerances of the
 * project's testing method (docs/testing.md): integers and bools must be equal element for
 * element; floats must have a relative L2 error below 1e-5 (f32, f64) or 1e-2 (f16, bf16,
 * or an output computed through f16/bf16 values), and a largest element error below ten
 * times that relative to the reference's RMS. NaN or infinity where the reference is finite
 * never passes; where the reference is NaN or infinite, the result must be the same.
 */
#ifndef FSTITCH_EXAMPLES_OUTPUT_CHECK_H
#define FSTITCH_EXAMPLES_OUTPUT_CHECK_H

#include <fstitch.h>
#include <stddef.h>

typedef struct example_tolerance {
  int exact;           /* every element must equal the reference */
  double l2;           /* bound on ||got - want||_2 / max(||want||_2, 1e-30) */
  double max_over_rms; /* bound on max_i |got_i - want_i| / max(rms(want), 1e-30) */
} example_tolerance;

/* The tolerance of an output of `dtype`; `through_low_precision` says that it is computed
 * from f16 or bf16 intermediate values, whose rounding may differ by one unit. */
example_tolerance example_output_tolerance(fst_dtype dtype, int through_low_precision);

typedef struct example_comparison {
  int ok;
  double l2_error;       /* floats; 0 for exact dtypes */
  double max_over_rms;   /* floats; 0 for exact dtypes */
  size_t mismatches;     /* elements that must be equal and are not (exact dtypes, NaN, inf) */
  size_t first_mismatch; /* index of the first of them, or of the largest float error */
  double got_value;      /* the result and the reference at first_mismatch */
  double want_value;
} example_comparison;

/* Compares `count` elements of `dtype`. */
void example_compare_output(fst_dtype dtype, const void* got, const void* want, size_t count,
                            const example_tolerance* tolerance, example_comparison* out);

#endif
