/*
 * The fstitch demo: builds gelu(layer_norm(x) * gamma + beta) as a framework would
 * decompose it, prints the graph text, fuses it and prints the plan, runs the fused kernel
 * on the context's backend (the GPU when there is one; else the host backend, which runs
 * the generated CUDA C on the CPU), and checks the result against the reference evaluator
 * and a direct computation in C.
 */
#include <fstitch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "device_buffers.h"

#define ROWS 64
#define COLS 256

/* Reports a failed call with fstitch's message and leaves main. */
#define CHECK(call)                                                                   \
  do {                                                                                \
    fst_status status_ = (call);                                                      \
    if (status_ != FST_OK) {                                                          \
      fprintf(stderr, "demo: %s failed: %s: %s\n", #call, fst_status_string(status_), \
              fst_last_error_message());                                              \
      goto done;                                                                      \
    }                                                                                 \
  } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* Uniform in [-1, 1): a 64-bit LCG, good enough for test data. */
static float random_float(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* gelu(layer_norm(x) * gamma + beta) computed directly in double, row by row. */
static void direct(const float* x, const float* gamma, const float* beta, double eps, double* out) {
  int r, c;
  for (r = 0; r < ROWS; ++r) {
    const float* row = x + r * COLS;
    double mean = 0, var = 0;
    for (c = 0; c < COLS; ++c) mean += row[c];
    mean /= COLS;
    for (c = 0; c < COLS; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= COLS;
    for (c = 0; c < COLS; ++c) {
      double z = (row[c] - mean) / sqrt(var + eps) * gamma[c] + beta[c];
      out[r * COLS + c] = 0.5 * z * (1.0 + erf(z / sqrt(2.0)));
    }
  }
}

int main(void) {
  const int64_t x_dims[2] = {ROWS, COLS};
  const int64_t w_dims[1] = {COLS};
  const int64_t last_axis[1] = {-1};
  const double eps = 1e-5;
  fst_context* ctx = NULL;
  fst_graph* g = NULL;
  fst_fusion* fusion = NULL;
  char* text = NULL;
  char* plan = NULL;
  float *x = NULL, *gamma = NULL, *beta = NULL, *y = NULL, *fused = NULL;
  double* expected = NULL;
  int exit_code = 1;
  fst_value vx, vgamma, vbeta, mean, centered, var, normed, affine, out;
  size_t i, kernels = 0;
  double checksum = 0, max_error = 0, diff2 = 0, ref2 = 0, rel_l2;
  uint64_t planned_bytes = 0, lower_bound = 0;
  fst_backend backend = FST_BACKEND_HOST;
  void* device[4] = {NULL, NULL, NULL, NULL};

  /* Backend auto: the GPU when a CUDA driver and device exist, else the host backend. */
  CHECK(fst_context_create(NULL, &ctx));
  CHECK(fst_context_active_backend(ctx, &backend));
  CHECK(fst_graph_create(ctx, &g));
  vx = fst_input(g, "x", FST_F32, 2, x_dims);
  vgamma = fst_input(g, "gamma", FST_F32, 1, w_dims);
  vbeta = fst_input(g, "beta", FST_F32, 1, w_dims);
  mean = fst_reduce(g, FST_REDUCE_MEAN, vx, 1, last_axis, 1);
  centered = fst_binary(g, FST_BINARY_SUB, vx, mean);
  var = fst_reduce(g, FST_REDUCE_MEAN, fst_binary(g, FST_BINARY_MUL, centered, centered), 1, last_axis, 1);
  normed = fst_binary(
      g, FST_BINARY_MUL, centered,
      fst_unary(g, FST_UNARY_RSQRT, fst_binary(g, FST_BINARY_ADD, var, fst_constant_f64(g, FST_F32, eps))));
  affine = fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, normed, vgamma), vbeta);
  out = fst_unary(g, FST_UNARY_GELU, affine);
  /* Builders record the first error on the graph; one check covers them all. */
  CHECK(fst_output(g, "y", out));
  CHECK(fst_graph_verify(g));

  CHECK(fst_graph_print(g, &text));
  printf("graph gelu(layer_norm(x) * gamma + beta), x f32[%d,%d]:\n%s\n", ROWS, COLS, text);

  CHECK(fst_fuse(g, NULL, &fusion));
  CHECK(fst_fusion_dump(fusion, &plan));
  CHECK(fst_fusion_kernel_count(fusion, &kernels));
  CHECK(fst_fusion_planned_bytes(fusion, &planned_bytes, &lower_bound));
  printf("%s\n", plan);

  x = malloc(sizeof(float) * ROWS * COLS);
  y = malloc(sizeof(float) * ROWS * COLS);
  fused = malloc(sizeof(float) * ROWS * COLS);
  gamma = malloc(sizeof(float) * COLS);
  beta = malloc(sizeof(float) * COLS);
  expected = malloc(sizeof(double) * ROWS * COLS);
  if (!x || !y || !fused || !gamma || !beta || !expected) {
    fprintf(stderr, "demo: out of memory\n");
    goto done;
  }
  for (i = 0; i < ROWS * COLS; ++i) x[i] = 3.0f * random_float() + 0.5f;
  for (i = 0; i < COLS; ++i) gamma[i] = 1.0f + 0.25f * random_float();
  for (i = 0; i < COLS; ++i) beta[i] = 0.1f * random_float();
  for (i = 0; i < ROWS * COLS; ++i) y[i] = fused[i] = NAN; /* unwritten elements would show */

  {
    const void* inputs[3];
    void* outputs[1];
    inputs[0] = x;
    inputs[1] = gamma;
    inputs[2] = beta;
    outputs[0] = y;
    CHECK(fst_graph_evaluate_reference(g, inputs, 3, outputs, 1));
    outputs[0] = fused;
    if (backend == FST_BACKEND_CUDA) {
      /* The CUDA backend takes device pointers and queues the kernels on the stream. */
      char why[256];
      const size_t x_bytes = sizeof(float) * ROWS * COLS, w_bytes = sizeof(float) * COLS;
      if (device_buffers_open(why, sizeof why) != 0) {
        fprintf(stderr, "demo: %s\n", why);
        goto done;
      }
      device[0] = device_copy_in(x, x_bytes);
      device[1] = device_copy_in(gamma, w_bytes);
      device[2] = device_copy_in(beta, w_bytes);
      device[3] = device_copy_in(fused, x_bytes);
      if (!device[0] || !device[1] || !device[2] || !device[3]) {
        fprintf(stderr, "demo: device allocation failed\n");
        goto done;
      }
      inputs[0] = device[0];
      inputs[1] = device[1];
      inputs[2] = device[2];
      outputs[0] = device[3];
      CHECK(fst_fusion_run(fusion, inputs, 3, outputs, 1, NULL, NULL));
      if (device_copy_out(fused, device[3], x_bytes) != 0) {
        fprintf(stderr, "demo: the run failed on the device\n");
        goto done;
      }
    } else {
      CHECK(fst_fusion_run(fusion, inputs, 3, outputs, 1, NULL, NULL));
    }
  }

  direct(x, gamma, beta, eps, expected);
  for (i = 0; i < ROWS * COLS; ++i) {
    double err = fabs(y[i] - expected[i]);
    if (isnan(err) || err > max_error) max_error = err; /* a NaN sticks */
    checksum += y[i];
  }
  for (i = 0; i < ROWS * COLS; ++i) {
    diff2 += ((double)fused[i] - y[i]) * ((double)fused[i] - y[i]);
    ref2 += (double)y[i] * y[i];
  }
  rel_l2 = sqrt(diff2 / ref2);
  printf("reference evaluator: %d x %d elements, checksum %.6f\n", ROWS, COLS, checksum);
  printf("max |reference - direct C| = %.3g\n", max_error);
  printf("fused plan: %zu kernel(s), %llu global bytes planned (lower bound %llu)\n", kernels,
         (unsigned long long)planned_bytes, (unsigned long long)lower_bound);
  printf("fused run on the %s backend: relative L2 error against the reference %.3g\n",
         backend == FST_BACKEND_CUDA ? "cuda" : "host", rel_l2);
  if (!(max_error < 1e-5)) {
    fprintf(stderr, "demo: FAILED: the reference disagrees with the direct computation\n");
    goto done;
  }
  if (!(rel_l2 < 1e-5)) {
    fprintf(stderr, "demo: FAILED: the fused kernels disagree with the reference\n");
    goto done;
  }
  printf("demo: OK\n");
  exit_code = 0;

done:
  for (i = 0; i < 4; ++i) device_free(device[i]);
  fst_string_free(text);
  fst_string_free(plan);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  free(x);
  free(y);
  free(fused);
  free(gamma);
  free(beta);
  free(expected);
  return exit_code;
}
