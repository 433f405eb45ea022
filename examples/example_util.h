/*
 * Small pieces the example programs share: reporting a failed fstitch call, reading
 * command-line values, seeded random numbers, the error measures, and the context and plan
 * summary every example prints. C99 and the public API only.
 */
#ifndef FSTITCH_EXAMPLES_EXAMPLE_UTIL_H
#define FSTITCH_EXAMPLES_EXAMPLE_UTIL_H

#include <fstitch.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of every example: success, a failed run or check, a bad command line. */
#define EXAMPLE_EXIT_OK 0
#define EXAMPLE_EXIT_FAILURE 1
#define EXAMPLE_EXIT_USAGE 2

/* Prints "<program>: <what> failed: <status>: <fstitch's message>" to stderr. */
void example_report(const char* program, const char* what, fst_status status);

/* Reads a decimal integer in [min, max] from the whole of `text`. 0 on success, -1 otherwise. */
int example_parse_int(const char* text, long long min, long long max, long long* out);

/* Reads "auto", "cuda" or "host". 0 on success, -1 otherwise. */
int example_parse_backend(const char* text, fst_backend* out);

/* "cuda", "host" or "auto". */
const char* example_backend_name(fst_backend backend);

/* Creates a context on `backend`, or on the default backend (auto, or the one named by
 * FSTITCH_BACKEND) when `use_default` is nonzero. Reports failures itself. */
fst_status example_create_context(const char* program, int use_default, fst_backend backend,
                                  fst_context** out_context);

/* A seeded generator of test data: a 64-bit LCG, the same numbers on every platform. */
typedef struct example_rng {
  uint64_t state;
} example_rng;

void example_rng_seed(example_rng* rng, uint64_t seed);
/* 64 random bits (the high half of the state is the better half, so it is mixed in). */
uint64_t example_rng_next(example_rng* rng);
/* Uniform in [-1, 1). */
double example_rng_uniform(example_rng* rng);
/* Uniform integer in [low, high]; high - low must be below 2^32. */
int64_t example_rng_int(example_rng* rng, int64_t low, int64_t high);

/* ||got - want||_2 / max(||want||_2, 1e-30) over n elements; NaN when any term is NaN, so a
 * NaN anywhere never passes a `< limit` test. */
double example_relative_l2(const double* got, const double* want, size_t n);

/* max_i |got_i - want_i|; NaN when any difference is NaN. */
double example_max_abs_error(const double* got, const double* want, size_t n);

/* Judges an f32 example's result: the reference evaluator against the direct computation in
 * C, and the fused outputs against both (relative L2 below 1e-5 each). Prints the errors,
 * and a FAILED line naming `program` and the backend when one is too large (or memory runs
 * out). Returns 0 when everything agrees. */
int example_judge_f32(const char* program, fst_backend backend, const float* fused, const float* reference,
                      const double* direct, size_t n);

/* Prints the plan in one line per kernel: how many kernels, the global bytes planned against
 * the lower bound, each kernel's name, launch configuration and launch kind. */
fst_status example_print_plan_summary(const char* program, const fst_fusion* fusion);

#endif
