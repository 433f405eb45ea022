/*
 * Row softmax as a framework decomposes it,
 *   y = exp(x - max(x)) / sum(exp(x - max(x)))   (over the last axis),
 * built through the C API, fused into one stitched kernel, run on the context's backend (the
 * GPU when there is one, else the host backend), and checked against the reference evaluator
 * and a direct computation in C.
 *
 * Usage: softmax [--rows N] [--cols N] [--backend auto|cuda|host]
 */
#include <fstitch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_cli.h"
#include "example_util.h"
#include "fusion_runner.h"

static const char* const program = "softmax";

#define CHECK(call)                            \
  do {                                         \
    fst_status status_ = (call);               \
    if (status_ != FST_OK) {                   \
      example_report(program, #call, status_); \
      goto done;                               \
    }                                          \
  } while (0)

/* The graph: input x f32[rows, cols]; output y. */
static fst_status build_softmax(fst_graph* g, int64_t rows, int64_t cols) {
  const int64_t x_dims[2] = {rows, cols};
  const int64_t last_axis[1] = {-1};
  fst_value x = fst_input(g, "x", FST_F32, 2, x_dims);
  fst_value row_max = fst_reduce(g, FST_REDUCE_MAX, x, 1, last_axis, 1);
  fst_value e = fst_unary(g, FST_UNARY_EXP, fst_binary(g, FST_BINARY_SUB, x, row_max));
  fst_value row_sum = fst_reduce(g, FST_REDUCE_SUM, e, 1, last_axis, 1);
  /* Builders record the first error on the graph; fst_output reports it. */
  return fst_output(g, "y", fst_binary(g, FST_BINARY_DIV, e, row_sum));
}

/* The same softmax in double, row by row. */
static void softmax_direct(const float* x, size_t rows, size_t cols, double* out) {
  size_t r, c;
  for (r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double max = row[0], sum = 0;
    for (c = 1; c < cols; ++c) max = row[c] > max ? row[c] : max;
    for (c = 0; c < cols; ++c) sum += out[r * cols + c] = exp(row[c] - max);
    for (c = 0; c < cols; ++c) out[r * cols + c] /= sum;
  }
}

int main(int argc, char** argv) {
  example_cli cli;
  fst_context* ctx = NULL;
  fst_graph* g = NULL;
  fst_fusion* fusion = NULL;
  fst_backend backend = FST_BACKEND_HOST;
  float *x = NULL, *reference = NULL, *fused = NULL;
  double* direct = NULL;
  size_t rows, cols, n, i;
  example_rng rng;
  int exit_code = EXAMPLE_EXIT_FAILURE;

  /* Line by line, so that a message on stderr comes after the lines it follows. */
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  switch (example_cli_parse(program, argc, argv, 64, 1000, &cli)) {
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
  CHECK(build_softmax(g, cli.rows, cli.cols));
  CHECK(fst_graph_verify(g));
  printf("softmax over the last axis of x f32[%zu,%zu], on the %s backend\n", rows, cols,
         example_backend_name(backend));

  CHECK(fst_fuse(g, NULL, &fusion)); /* default options: policy stitch */
  if (example_print_plan_summary(program, fusion) != FST_OK) goto done;

  x = malloc(sizeof(float) * n);
  reference = malloc(sizeof(float) * n);
  fused = malloc(sizeof(float) * n);
  direct = malloc(sizeof(double) * n);
  if (!x || !reference || !fused || !direct) {
    fprintf(stderr, "%s: out of memory for %zu x %zu elements\n", program, rows, cols);
    goto done;
  }
  example_rng_seed(&rng, 2);
  /* Logits spread over [-4, 4): large enough that the max subtraction matters. */
  for (i = 0; i < n; ++i) x[i] = (float)(4.0 * example_rng_uniform(&rng));
  for (i = 0; i < n; ++i) reference[i] = fused[i] = NAN; /* elements nobody writes stay NaN */

  {
    const void* inputs[1];
    void* outputs[1];
    const example_buffer in[1] = {{x, sizeof(float) * n}};
    const example_buffer out[1] = {{fused, sizeof(float) * n}};
    inputs[0] = x;
    outputs[0] = reference;
    CHECK(fst_graph_evaluate_reference(g, inputs, 1, outputs, 1));
    if (example_run_fusion(program, fusion, backend, in, 1, out, 1) != 0) goto done;
  }

  softmax_direct(x, rows, cols, direct);
  if (example_judge_f32(program, backend, fused, reference, direct, n) != 0) goto done;
  printf("%s: OK\n", program);
  exit_code = EXAMPLE_EXIT_OK;

done:
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  free(x);
  free(reference);
  free(fused);
  free(direct);
  return exit_code;
}
