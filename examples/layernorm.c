/*
 * LayerNorm as a framework decomposes it,
 *   y = (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) * gamma + beta   (over the last axis),
 * built through the C API, fused into one stitched kernel, run on the context's backend (the
 * GPU when there is one, else the host backend), and checked against the reference evaluator
 * and a direct computation in C.
 *
 * Usage: layernorm [--rows N] [--cols N] [--backend auto|cuda|host]
 */
#include <fstitch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_cli.h"
#include "example_util.h"
#include "fusion_runner.h"

static const char* const program = "layernorm";
static const double eps = 1e-5;

#define CHECK(call)                            \
  do {                                         \
    fst_status status_ = (call);               \
    if (status_ != FST_OK) {                   \
      example_report(program, #call, status_); \
      goto done;                               \
    }                                          \
  } while (0)

/* The graph: inputs x f32[rows, cols], gamma f32[cols], beta f32[cols]; output y. */
static fst_status build_layer_norm(fst_graph* g, int64_t rows, int64_t cols) {
  const int64_t x_dims[2] = {rows, cols};
  const int64_t w_dims[1] = {cols};
  const int64_t last_axis[1] = {-1};
  fst_value x = fst_input(g, "x", FST_F32, 2, x_dims);
  fst_value gamma = fst_input(g, "gamma", FST_F32, 1, w_dims);
  fst_value beta = fst_input(g, "beta", FST_F32, 1, w_dims);
  fst_value mean = fst_reduce(g, FST_REDUCE_MEAN, x, 1, last_axis, 1);
  fst_value centered = fst_binary(g, FST_BINARY_SUB, x, mean);
  fst_value var =
      fst_reduce(g, FST_REDUCE_MEAN, fst_binary(g, FST_BINARY_MUL, centered, centered), 1, last_axis, 1);
  fst_value inv_std =
      fst_unary(g, FST_UNARY_RSQRT, fst_binary(g, FST_BINARY_ADD, var, fst_constant_f64(g, FST_F32, eps)));
  fst_value normed = fst_binary(g, FST_BINARY_MUL, centered, inv_std);
  fst_value y = fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, normed, gamma), beta);
  /* Builders record the first error on the graph; fst_output reports it. */
  return fst_output(g, "y", y);
}

/* The same LayerNorm in double, row by row. The constant eps is f32 in the graph. */
static void layer_norm_direct(const float* x, const float* gamma, const float* beta, size_t rows, size_t cols,
                              double* out) {
  const double eps_f32 = (double)(float)eps;
  size_t r, c;
  for (r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double mean = 0, var = 0, inv_std;
    for (c = 0; c < cols; ++c) mean += row[c];
    mean /= (double)cols;
    for (c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= (double)cols;
    inv_std = 1.0 / sqrt(var + eps_f32);
    for (c = 0; c < cols; ++c) out[r * cols + c] = (row[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}

int main(int argc, char** argv) {
  example_cli cli;
  fst_context* ctx = NULL;
  fst_graph* g = NULL;
  fst_fusion* fusion = NULL;
  fst_backend backend = FST_BACKEND_HOST;
  float *x = NULL, *gamma = NULL, *beta = NULL, *reference = NULL, *fused = NULL;
  double* direct = NULL;
  size_t rows, cols, n, i;
  example_rng rng;
  int exit_code = EXAMPLE_EXIT_FAILURE;

  /* Line by line, so that a message on stderr comes after the lines it follows. */
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  switch (example_cli_parse(program, argc, argv, 64, 1024, &cli)) {
    case EXAMPLE_CLI_RUN:
      break;
    case EXAMPLE_CLI_HELP:
      return EXAMPLE_EXIT_OK;
    default:
      return EXAMPLE_EXIT_USAGE;
  }
  rows = (size_t)cli.rows;
  cols = (size_t)cli.cols;
  n = rows * cols;

  if (example_create_context(program, cli.default_backend, cli.backend, &ctx) != FST_OK) goto done;
  CHECK(fst_context_active_backend(ctx, &backend));
  CHECK(fst_graph_create(ctx, &g));
  CHECK(build_layer_norm(g, cli.rows, cli.cols));
  CHECK(fst_graph_verify(g));
  printf("layernorm over the last axis of x f32[%zu,%zu], eps %g, on the %s backend\n", rows, cols, eps,
         example_backend_name(backend));

  CHECK(fst_fuse(g, NULL, &fusion)); /* default options: policy stitch */
  if (example_print_plan_summary(program, fusion) != FST_OK) goto done;

  x = malloc(sizeof(float) * n);
  reference = malloc(sizeof(float) * n);
  fused = malloc(sizeof(float) * n);
  gamma = malloc(sizeof(float) * cols);
  beta = malloc(sizeof(float) * cols);
  direct = malloc(sizeof(double) * n);
  if (!x || !reference || !fused || !gamma || !beta || !direct) {
    fprintf(stderr, "%s: out of memory for %zu x %zu elements\n", program, rows, cols);
    goto done;
  }
  example_rng_seed(&rng, 1);
  /* An offset and a spread other than 0 and 1, so the normalization has work to do. */
  for (i = 0; i < n; ++i) x[i] = (float)(3.0 * example_rng_uniform(&rng) + 0.5);
  for (i = 0; i < cols; ++i) gamma[i] = (float)(1.0 + 0.25 * example_rng_uniform(&rng));
  for (i = 0; i < cols; ++i) beta[i] = (float)(0.1 * example_rng_uniform(&rng));
  for (i = 0; i < n; ++i) reference[i] = fused[i] = NAN; /* elements nobody writes stay NaN */

  {
    const void* inputs[3];
    void* outputs[1];
    const example_buffer in[3] = {
        {x, sizeof(float) * n}, {gamma, sizeof(float) * cols}, {beta, sizeof(float) * cols}};
    const example_buffer out[1] = {{fused, sizeof(float) * n}};
    inputs[0] = x;
    inputs[1] = gamma;
    inputs[2] = beta;
    outputs[0] = reference;
    CHECK(fst_graph_evaluate_reference(g, inputs, 3, outputs, 1));
    if (example_run_fusion(program, fusion, backend, in, 3, out, 1) != 0) goto done;
  }

  layer_norm_direct(x, gamma, beta, rows, cols, direct);
  if (example_judge_f32(program, backend, fused, reference, direct, n) != 0) goto done;
  printf("%s: OK\n", program);
  exit_code = EXAMPLE_EXIT_OK;

done:
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  free(x);
  free(gamma);
  free(beta);
  free(reference);
  free(fused);
  free(direct);
  return exit_code;
}
