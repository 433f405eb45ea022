/*
 * Elements of every fstitch dtype as plain C sees them: f16 and bf16 as 16-bit patterns made
 * from floats by rounding to nearest even (with integer operations only, so no compiler
 * support for half types is needed), random test data of any dtype, and elements read back
 * as double or int64 for comparison.
 */
#ifndef FSTITCH_EXAMPLES_DTYPE_VALUES_H
#define FSTITCH_EXAMPLES_DTYPE_VALUES_H

#include <fstitch.h>
#include <stddef.h>
#include <stdint.h>

#include "example_util.h"

/* IEEE binary16 bits nearest to `value` (ties to even; overflow to infinity; NaN stays NaN). */
uint16_t example_f16_bits(float value);
/* bfloat16 bits nearest to `value` (ties to even; NaN stays NaN). */
uint16_t example_bf16_bits(float value);
/* The exact value of binary16 or bfloat16 bits. */
double example_f16_value(uint16_t bits);
double example_bf16_value(uint16_t bits);

/* Whether `dtype` is f32, f16, bf16 or f64. */
int example_dtype_is_float(fst_dtype dtype);

/* Fills `count` elements of `dtype` at `data` with fresh random values: floats uniform in
 * [-1, 1] (rounded to the dtype), signed integers in [-8, 8], u8 in [0, 16], bools 0 and 1. */
void example_fill_random(fst_dtype dtype, void* data, size_t count, example_rng* rng);

/* Element `index` of a float array of `dtype`, exactly, as a double. */
double example_float_element(fst_dtype dtype, const void* data, size_t index);
/* Element `index` of an integer or bool array of `dtype`, as an int64 (bool: its byte). */
int64_t example_integer_element(fst_dtype dtype, const void* data, size_t index);

#endif
