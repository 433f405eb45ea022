/* A transformer MLP block handed over whole, matmuls as opaque operations:
 *
 *   h = rmsnorm(x) * g;  u = matmul(h, w1);  a = gelu(u);  d = matmul(a, w2);  y = x + d
 *
 * fstitch fuses what lies between the matmuls and returns the plan as steps: kernels to
 * launch and opaque operations for the caller to run, each with the buffers it reads and
 * writes. This program prints the steps, runs them with fst_fusion_run_with_opaque (the
 * callback computes the matmuls) and checks the result against the reference evaluator run
 * through the same callback. It uses the host backend, where the callback gets host
 * pointers; on the CUDA backend it would get device pointers and queue its matmul (a
 * cuBLAS call, say) on the stream fst_opaque_call_stream() gives. Prints "two_matmuls: OK". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fstitch.h"

enum { kTokens = 16, kModel = 64, kHidden = 256 };

#define TRY(call)                                                                       \
  do {                                                                                  \
    fst_status status_ = (call);                                                        \
    if (status_ != FST_OK) {                                                            \
      fprintf(stderr, "two_matmuls: %s failed: %s\n", #call, fst_last_error_message()); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* The callback: every opaque operation of this graph is an f32 matmul [m,k] x [k,n]. */
static fst_status run_matmul(const fst_opaque_call* call, void* user_data) {
  const float* a;
  const float* b;
  float* c;
  const void* data;
  void* result;
  fst_dtype dtype;
  size_t rank;
  const int64_t *a_dims, *b_dims, *c_dims;
  int64_t i, j, p;
  int* calls = (int*)user_data;
  if (fst_opaque_call_operand(call, 0, &data, &dtype, &rank, &a_dims) != FST_OK)
    return fst_last_error_status();
  a = (const float*)data;
  if (fst_opaque_call_operand(call, 1, &data, &dtype, &rank, &b_dims) != FST_OK)
    return fst_last_error_status();
  b = (const float*)data;
  if (fst_opaque_call_result(call, &result, &dtype, &rank, &c_dims) != FST_OK) return fst_last_error_status();
  c = (float*)result;
  if (a_dims[1] != b_dims[0]) {
    fst_opaque_call_fail(call, "inner dimensions differ");
    return FST_ERROR_SHAPE;
  }
  for (i = 0; i < c_dims[0]; ++i) {
    for (j = 0; j < c_dims[1]; ++j) {
      double sum = 0;
      for (p = 0; p < a_dims[1]; ++p) sum += (double)a[i * a_dims[1] + p] * b[p * b_dims[1] + j];
      c[i * c_dims[1] + j] = (float)sum;
    }
  }
  ++*calls;
  return FST_OK;
}

static fst_value matmul(fst_graph* g, fst_value a, fst_value b, int64_t rows, int64_t cols) {
  const fst_value operands[2] = {a, b};
  const int64_t dims[2] = {rows, cols};
  return fst_opaque(g, "matmul", 2, operands, FST_F32, 2, dims);
}

static fst_graph* build_block(fst_context* ctx) {
  const int64_t x_dims[2] = {kTokens, kModel}, w1_dims[2] = {kModel, kHidden}, w2_dims[2] = {kHidden, kModel};
  const int64_t g_dims[1] = {kModel}, axis[1] = {1};
  fst_graph* g;
  fst_value x, gain, w1, w2, ms, h, u, a, d;
  TRY(fst_graph_create(ctx, &g));
  x = fst_input(g, "x", FST_F32, 2, x_dims);
  gain = fst_input(g, "gain", FST_F32, 1, g_dims);
  w1 = fst_input(g, "w1", FST_F32, 2, w1_dims);
  w2 = fst_input(g, "w2", FST_F32, 2, w2_dims);
  /* RMSNorm, as a framework decomposes it; builders broadcast like numpy. */
  ms = fst_reduce(g, FST_REDUCE_MEAN, fst_binary(g, FST_BINARY_MUL, x, x), 1, axis, 1);
  h = fst_binary(g, FST_BINARY_MUL,
                 fst_binary(g, FST_BINARY_MUL, x,
                            fst_unary(g, FST_UNARY_RSQRT,
                                      fst_binary(g, FST_BINARY_ADD, ms, fst_constant_f64(g, FST_F32, 1e-6)))),
                 gain);
  u = matmul(g, h, w1, kTokens, kHidden);
  a = fst_unary(g, FST_UNARY_GELU, u);
  d = matmul(g, a, w2, kTokens, kModel);
  TRY(fst_output(g, "y", fst_binary(g, FST_BINARY_ADD, x, d)));
  TRY(fst_graph_status(g)); /* the first builder error, if any */
  return g;
}

/* "input 2", "output 0", "workspace+4096". */
static void print_location(fst_param_kind kind, size_t at) {
  if (kind == FST_PARAM_WORKSPACE) {
    printf("workspace+%zu", at);
  } else {
    printf("%s %zu", kind == FST_PARAM_INPUT ? "input" : "output", at);
  }
}

static void print_steps(const fst_fusion* f) {
  size_t steps, s;
  TRY(fst_fusion_step_count(f, &steps));
  for (s = 0; s < steps; ++s) {
    fst_step_kind kind;
    size_t index;
    TRY(fst_fusion_step(f, s, &kind, &index));
    if (kind == FST_STEP_KERNEL) {
      const fst_kernel* k;
      const char* name;
      TRY(fst_fusion_kernel(f, index, &k));
      TRY(fst_kernel_name(k, &name));
      printf("step %zu: launch kernel %s\n", s, name);
    } else {
      const char* name;
      size_t noperands, o, at, rank;
      fst_param_kind where;
      fst_dtype dtype;
      const int64_t* dims;
      TRY(fst_fusion_opaque(f, index, &name, &noperands, NULL));
      printf("step %zu: run opaque \"%s\" reading", s, name);
      for (o = 0; o < noperands; ++o) {
        TRY(fst_fusion_opaque_operand(f, index, o, &where, &at, &dtype, &rank, &dims));
        printf(" [%lldx%lld] at ", (long long)dims[0], (long long)dims[1]);
        print_location(where, at);
      }
      TRY(fst_fusion_opaque_result(f, index, &where, &at, &dtype, &rank, &dims));
      printf(", writing ");
      print_location(where, at);
      printf("\n");
    }
  }
}

static void fill(float* data, size_t n, unsigned seed, float scale) {
  size_t i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = scale * ((float)(seed >> 8) / 16777216.0f - 0.5f);
  }
}

int main(void) {
  static float x[kTokens * kModel], gain[kModel], w1[kModel * kHidden], w2[kHidden * kModel];
  static float y[kTokens * kModel], want[kTokens * kModel];
  const void* inputs[4] = {x, gain, w1, w2};
  void* outputs[1] = {y};
  void* expected[1] = {want};
  fst_context_options* options;
  fst_context* ctx;
  fst_graph* g;
  fst_fusion* f;
  size_t kernels, i;
  int calls = 0;
  double err = 0, norm = 0;

  fill(x, kTokens * kModel, 1, 2.0f);
  fill(gain, kModel, 2, 1.0f);
  fill(w1, kModel * kHidden, 3, 0.25f);
  fill(w2, kHidden * kModel, 4, 0.125f);

  TRY(fst_context_options_create(&options));
  TRY(fst_context_options_set_backend(options, FST_BACKEND_HOST)); /* the callback takes host pointers */
  TRY(fst_context_create(options, &ctx));
  fst_context_options_destroy(options);
  g = build_block(ctx);
  TRY(fst_fuse(g, NULL, &f));
  TRY(fst_fusion_kernel_count(f, &kernels));
  printf("%zu kernel(s) around 2 matmuls\n", kernels);
  print_steps(f);

  TRY(fst_fusion_run_with_opaque(f, inputs, 4, outputs, 1, NULL, NULL, run_matmul, &calls));
  TRY(fst_graph_evaluate_reference_with_opaque(g, inputs, 4, expected, 1, run_matmul, &calls));
  for (i = 0; i < kTokens * kModel; ++i) {
    err += ((double)y[i] - want[i]) * ((double)y[i] - want[i]);
    norm += (double)want[i] * want[i];
  }
  err = sqrt(err / norm);
  printf("relative L2 error against the reference: %.2e, matmuls run: %d\n", err, calls);
  fst_fusion_destroy(f);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  if (!(err < 1e-5) || calls != 4) {
    fprintf(stderr, "two_matmuls: the fused run differs from the reference\n");
    return 1;
  }
  printf("two_matmuls: OK\n");
  return 0;
}
