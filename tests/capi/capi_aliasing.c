/* The aliasing contract of fst_fusion_run and fst_kernel_launch: buffers that overlap are
 * refused with a message naming both, except an output that takes an input's buffer exactly
 * where the plan can update that input in place, which then gives the reference result.
 * Refusals come before any compilation, so they run under valgrind too; the in-place runs
 * are skipped when FSTITCH_CAPI_TEST_NO_COMPILE is set. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define N 1003 /* not a multiple of the vector width: the scalar tail runs too */

static int compile_allowed(void) {
  const char* skip = getenv("FSTITCH_CAPI_TEST_NO_COMPILE");
  return skip == NULL || skip[0] == '\0';
}

static void fill(float* values, size_t count, float scale) {
  size_t i;
  for (i = 0; i < count; ++i) values[i] = scale * (float)((int)(i % 17) - 8) + 0.25f;
}

static fst_fusion* fuse_with(fst_graph* g, fst_fusion_policy policy) {
  fst_fuse_options* options = NULL;
  fst_fusion* fusion = NULL;
  if (g == NULL) return NULL;
  CHECK_OK(fst_fuse_options_create(&options));
  CHECK_OK(fst_fuse_options_set_policy(options, policy));
  CHECK_OK(fst_fuse(g, options, &fusion));
  fst_fuse_options_destroy(options);
  return fusion;
}

/* The last error message contains `part`. */
static void check_message(const char* part) {
  CHECK(capi_contains(fst_last_error_message(), part));
}

/* Runs `fusion` with `outputs` and compares them with the reference evaluator on the
 * inputs as they were before the run (`noutputs` f32 outputs of `count` elements). */
static void check_in_place_run(const fst_graph* g, const fst_fusion* fusion, const void* const* inputs,
                               size_t ninputs, void* const* outputs, size_t noutputs, size_t count) {
  float* saved = (float*)malloc(ninputs * count * sizeof(float));
  float* expected = (float*)malloc(noutputs * count * sizeof(float));
  const void* saved_inputs[4];
  void* expected_outputs[4];
  size_t i, k;
  CHECK(saved != NULL && expected != NULL && ninputs <= 4 && noutputs <= 4);
  if (saved == NULL || expected == NULL || ninputs > 4 || noutputs > 4) {
    free(saved);
    free(expected);
    return;
  }
  for (i = 0; i < ninputs; ++i) {
    memcpy(saved + i * count, inputs[i], count * sizeof(float));
    saved_inputs[i] = saved + i * count;
  }
  for (i = 0; i < noutputs; ++i) expected_outputs[i] = expected + i * count;
  CHECK_OK(fst_graph_evaluate_reference(g, saved_inputs, ninputs, expected_outputs, noutputs));
  CHECK_OK(fst_fusion_run(fusion, inputs, ninputs, outputs, noutputs, NULL, NULL));
  for (i = 0; i < noutputs; ++i) {
    size_t wrong = 0;
    for (k = 0; k < count; ++k) {
      const float got = ((const float*)outputs[i])[k], want = expected[i * count + k];
      if (!(fabsf(got - want) <= 1e-6f * (1.0f + fabsf(want)))) ++wrong;
    }
    CHECK(wrong == 0);
  }
  free(saved);
  free(expected);
}

/* An in-place transpose reads other elements than each thread writes: refused, and the
 * buffer keeps its values. Launching the kernel alone is refused the same way. */
static void test_transpose_refused(void) {
  float x[4 * 8], before[4 * 8];
  const void* inputs[1];
  void* outputs[1];
  void* args[2];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion;
  const fst_kernel* kernel = NULL;
  size_t params = 0;
  fst_value in;
  if (g == NULL) return;
  in = fst_input(g, "x", FST_F32, 2, (const int64_t[]){4, 8});
  CHECK_OK(fst_output(g, "y", fst_permute(g, in, 2, (const int64_t[]){1, 0})));
  fusion = fuse_with(g, FST_POLICY_STITCH);
  fill(x, 32, 1.0f);
  memcpy(before, x, sizeof x);
  inputs[0] = x;
  outputs[0] = x;
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 1, outputs, 1, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs[0] (\"y\") overlaps inputs[0] (\"x\")");
  check_message("permute");
  CHECK(memcmp(x, before, sizeof x) == 0);

  CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
  CHECK_OK(fst_kernel_param_count(kernel, &params));
  CHECK(params == 2);
  if (params == 2) {
    args[0] = x; /* the kernel reads x and writes y */
    args[1] = x;
    CHECK_FAIL(fst_kernel_launch(kernel, args, 2, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch",
               "args[1] (output 0 \"y\") overlaps args[0] (input 0 \"x\")");
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

/* Two outputs in one buffer, the workspace over an input, and an output over part of an
 * input are refused whatever the plan. */
static void test_overlaps_refused(void) {
  static float x[N + 8], a[2 * N], y[N], z[N];
  const void* inputs[2];
  void* outputs[2];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion;
  fst_value in, scale, e;
  size_t workspace = 0;
  if (g == NULL) return;
  in = fst_input(g, "x", FST_F32, 1, (const int64_t[]){N});
  scale = fst_input(g, "a", FST_F32, 1, (const int64_t[]){N});
  e = fst_unary(g, FST_UNARY_EXP, in);
  CHECK_OK(fst_output(g, "sum", fst_binary(g, FST_BINARY_ADD, e, scale)));
  CHECK_OK(fst_output(g, "product", fst_binary(g, FST_BINARY_MUL, e, scale)));
  fusion = fuse_with(g, FST_POLICY_NONE); /* exp(x) crosses kernels in the workspace */
  fill(x, N + 8, 0.01f);
  fill(a, N, 1.0f);
  inputs[0] = x;
  inputs[1] = a;

  outputs[0] = y;
  outputs[1] = y;
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs must not share memory");
  check_message("outputs[0] (\"sum\")");
  check_message("outputs[1] (\"product\")");

  CHECK_OK(fst_fusion_workspace_size(fusion, &workspace));
  CHECK(workspace > 0);
  outputs[1] = y + 1; /* partly over outputs[0] */
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs must not share memory");

  outputs[0] = x + 2; /* sum over part of x, which also runs past its end */
  outputs[1] = y;
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs[0] (\"sum\") overlaps inputs[0] (\"x\") in part");

  outputs[0] = a + N / 2; /* sum over the second half of a and past it */
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs[0] (\"sum\") overlaps inputs[1] (\"a\") in part");

  outputs[0] = y; /* outputs apart, the workspace over an input or an output */
  outputs[1] = z;
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, x, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "the workspace must not share memory");
  check_message("inputs[0] (\"x\")");
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 2, z, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "the workspace must not share memory");
  check_message("outputs[1] (\"product\")");
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

/* x = x * a + 1 written back into x (with a in x's buffer too: inputs may share memory),
 * and an output that takes a dead input's buffer, give the reference result. */
static void test_elementwise_in_place(void) {
  static float x[N], a[N];
  const void* inputs[2];
  void* outputs[1];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion;
  fst_value in, scale;
  if (g == NULL) return;
  in = fst_input(g, "x", FST_F32, 1, (const int64_t[]){N});
  scale = fst_input(g, "a", FST_F32, 1, (const int64_t[]){N});
  CHECK_OK(fst_output(g, "y",
                      fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, in, scale),
                                 fst_constant_f64(g, FST_F32, 1.0))));
  fusion = fuse_with(g, FST_POLICY_STITCH);
  if (fusion != NULL && compile_allowed()) {
    fill(x, N, 0.5f);
    fill(a, N, -0.25f);
    inputs[0] = x;
    inputs[1] = a;
    outputs[0] = x;
    check_in_place_run(g, fusion, inputs, 2, outputs, 1, N);
    outputs[0] = a;
    check_in_place_run(g, fusion, inputs, 2, outputs, 1, N);
    inputs[1] = x; /* x * x + 1 into x */
    outputs[0] = x;
    check_in_place_run(g, fusion, inputs, 2, outputs, 1, N);
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

/* One kernel stores "scaled" = a * 2 into x's buffer and "shifted" = x + a: every read of
 * x must come before the store over it, in the vector loop and in the scalar tail. */
static void test_store_after_every_read(void) {
  static float x[N], a[N], shifted[N];
  const void* inputs[2];
  void* outputs[2];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion;
  fst_value in, other;
  size_t kernels = 0;
  if (g == NULL) return;
  in = fst_input(g, "x", FST_F32, 1, (const int64_t[]){N});
  other = fst_input(g, "a", FST_F32, 1, (const int64_t[]){N});
  CHECK_OK(fst_output(g, "scaled", fst_binary(g, FST_BINARY_MUL, other, fst_constant_f64(g, FST_F32, 2.0))));
  CHECK_OK(fst_output(g, "shifted", fst_binary(g, FST_BINARY_ADD, in, other)));
  fusion = fuse_with(g, FST_POLICY_STITCH);
  CHECK_OK(fst_fusion_kernel_count(fusion, &kernels));
  CHECK(kernels == 1);
  if (fusion != NULL && compile_allowed()) {
    fill(x, N, 0.5f);
    fill(a, N, 3.0f);
    inputs[0] = x;
    inputs[1] = a;
    outputs[0] = x;
    outputs[1] = shifted;
    check_in_place_run(g, fusion, inputs, 2, outputs, 2, N);
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

/* One kernel per operation: "first" = x + 1 runs before "second" = x * 3, which reads x.
 * "first" over x is refused (x would be read after it is overwritten); "second" over x is
 * honoured, as the earlier kernel has read x by then. */
static void test_later_reads(void) {
  static float x[N], first[N];
  const void* inputs[1];
  void* outputs[2];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion;
  fst_value in;
  if (g == NULL) return;
  in = fst_input(g, "x", FST_F32, 1, (const int64_t[]){N});
  CHECK_OK(fst_output(g, "first", fst_binary(g, FST_BINARY_ADD, in, fst_constant_f64(g, FST_F32, 1.0))));
  CHECK_OK(fst_output(g, "second", fst_binary(g, FST_BINARY_MUL, in, fst_constant_f64(g, FST_F32, 3.0))));
  fusion = fuse_with(g, FST_POLICY_NONE);
  fill(x, N, 0.5f);
  inputs[0] = x;
  outputs[0] = x;
  outputs[1] = first;
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 1, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs[0] (\"first\") overlaps inputs[0] (\"x\")");
  check_message("reads input \"x\" after kernel");
  check_message("has written output \"first\"");
  CHECK(x[0] == 0.5f * -8 + 0.25f); /* untouched */
  if (fusion != NULL && compile_allowed()) {
    outputs[0] = first;
    outputs[1] = x;
    check_in_place_run(g, fusion, inputs, 1, outputs, 2, N);
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

void test_aliasing(void) {
  test_transpose_refused();
  test_overlaps_refused();
  test_elementwise_in_place();
  test_store_after_every_read();
  test_later_reads();
}
