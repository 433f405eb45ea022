/* Steps and opaque operations through the C API: a block with two matmuls left to the
 * caller, its steps checked against every dependency, fused runs through a callback on the
 * host backend compared with the reference evaluator through the same callback, and every
 * bad argument or failing callback. Runs are skipped when FSTITCH_CAPI_TEST_NO_COMPILE is set. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

enum { kRows = 4, kModel = 8, kHidden = 6 };

/* What the callbacks saw, and how they should misbehave. */
typedef struct callback_state {
  int calls;
  int matmuls;
  fst_status fail_with; /* FST_OK: succeed */
  int return_code;      /* nonzero: return this raw value instead */
  int checked_queries;
} callback_state;

/* result[m][n] = sum_k a[m][k] * b[k][n], for f32 operands of rank 2. */
static fst_status run_matmul(const fst_opaque_call* call) {
  const void* a_data = NULL;
  const void* b_data = NULL;
  void* out = NULL;
  fst_dtype dtype;
  size_t rank;
  const int64_t* a_dims;
  const int64_t* b_dims;
  const int64_t* out_dims;
  int64_t m, n, k, kk;
  if (fst_opaque_call_operand(call, 0, &a_data, &dtype, &rank, &a_dims) != FST_OK || rank != 2 ||
      dtype != FST_F32)
    return FST_ERROR_INTERNAL;
  if (fst_opaque_call_operand(call, 1, &b_data, &dtype, &rank, &b_dims) != FST_OK || rank != 2 ||
      dtype != FST_F32)
    return FST_ERROR_INTERNAL;
  if (fst_opaque_call_result(call, &out, &dtype, &rank, &out_dims) != FST_OK || rank != 2)
    return FST_ERROR_INTERNAL;
  if (a_dims[1] != b_dims[0] || out_dims[0] != a_dims[0] || out_dims[1] != b_dims[1]) {
    fst_opaque_call_fail(call, "matmul shapes do not agree");
    return FST_ERROR_SHAPE;
  }
  for (m = 0; m < out_dims[0]; ++m) {
    for (n = 0; n < out_dims[1]; ++n) {
      double sum = 0;
      k = a_dims[1];
      for (kk = 0; kk < k; ++kk)
        sum += (double)((const float*)a_data)[m * k + kk] * ((const float*)b_data)[kk * out_dims[1] + n];
      ((float*)out)[m * out_dims[1] + n] = (float)sum;
    }
  }
  return FST_OK;
}

static fst_status opaque_callback(const fst_opaque_call* call, void* user_data) {
  callback_state* state = (callback_state*)user_data;
  const char* name = NULL;
  size_t count = 0;
  void* stream = SENTINEL_PTR;
  ++state->calls;
  if (state->return_code != 0) return (fst_status)state->return_code;
  if (state->fail_with != FST_OK) {
    CHECK_OK(fst_opaque_call_fail(call, "the caller's matmul ran out of patience"));
    return state->fail_with;
  }
  if (fst_opaque_call_name(call, &name) != FST_OK || fst_opaque_call_operand_count(call, &count) != FST_OK)
    return FST_ERROR_INTERNAL;
  if (!state->checked_queries) {
    const void* data = SENTINEL_PTR;
    fst_dtype dtype = (fst_dtype)77;
    size_t rank = 77;
    const int64_t* dims = (const int64_t*)SENTINEL_PTR;
    fst_value value = FST_VALUE_INVALID;
    state->checked_queries = 1;
    CHECK_OK(fst_opaque_call_stream(call, &stream));
    CHECK(stream == NULL); /* the host backend and the reference have no stream */
    CHECK_OK(fst_opaque_call_value(call, &value));
    CHECK(value != FST_VALUE_INVALID);
    CHECK_FAIL(fst_opaque_call_operand(call, count, &data, &dtype, &rank, &dims), FST_ERROR_INVALID_ARGUMENT,
               "fst_opaque_call_operand", "out of range");
    CHECK(data == SENTINEL_PTR && rank == 77);
    CHECK_FAIL(fst_opaque_call_operand(call, 0, NULL, &dtype, &rank, &dims), FST_ERROR_INVALID_ARGUMENT,
               "fst_opaque_call_operand", "out_data");
    CHECK_FAIL(fst_opaque_call_result(call, NULL, &dtype, &rank, &dims), FST_ERROR_INVALID_ARGUMENT,
               "fst_opaque_call_result", "out_data");
    CHECK_FAIL(fst_opaque_call_name(call, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_opaque_call_name",
               "out_name");
    CHECK_FAIL(fst_opaque_call_value(call, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_opaque_call_value",
               "out_value");
    CHECK_FAIL(fst_opaque_call_operand_count(call, NULL), FST_ERROR_INVALID_ARGUMENT,
               "fst_opaque_call_operand_count", "out_count");
    CHECK_FAIL(fst_opaque_call_stream(call, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_opaque_call_stream",
               "out_stream");
    CHECK_FAIL(fst_opaque_call_fail(call, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_opaque_call_fail",
               "message");
  }
  if (strcmp(name, "matmul") == 0 && count == 2) {
    ++state->matmuls;
    return run_matmul(call);
  }
  return FST_ERROR_UNSUPPORTED;
}

/* x f32[4,8], w1 f32[8,6], w2 f32[6,8]:
 *   h = matmul(x * 0.5, w1); t = tanh(h); o = matmul(t, w2); y = o + x; outputs y and h. */
static fst_graph* build_block(void) {
  const int64_t x_dims[] = {kRows, kModel}, w1_dims[] = {kModel, kHidden}, w2_dims[] = {kHidden, kModel};
  const int64_t h_dims[] = {kRows, kHidden};
  fst_graph* g = capi_new_graph();
  fst_value x, w1, w2, half, a, h, t, o, y, operands[2];
  if (g == NULL) return NULL;
  x = fst_input(g, "x", FST_F32, 2, x_dims);
  w1 = fst_input(g, "w1", FST_F32, 2, w1_dims);
  w2 = fst_input(g, "w2", FST_F32, 2, w2_dims);
  half = fst_broadcast(g, fst_constant_f64(g, FST_F32, 0.5), 2, x_dims);
  a = fst_binary(g, FST_BINARY_MUL, x, half);
  operands[0] = a;
  operands[1] = w1;
  h = fst_opaque(g, "matmul", 2, operands, FST_F32, 2, h_dims);
  t = fst_unary(g, FST_UNARY_TANH, h);
  operands[0] = t;
  operands[1] = w2;
  o = fst_opaque(g, "matmul", 2, operands, FST_F32, 2, x_dims);
  y = fst_binary(g, FST_BINARY_ADD, o, x);
  CHECK_OK(fst_output(g, "y", y));
  CHECK_OK(fst_output(g, "h", h));
  CHECK_OK(fst_graph_status(g));
  return g;
}

/* Walks the steps through the public queries: every buffer a step reads was written by an
 * earlier step at the same location (graph inputs exist from the start), every kernel and
 * opaque operation runs once, every output is written. Locations are (kind, index) pairs. */
typedef struct step_location {
  int kind;
  size_t index;
} step_location;

static int location_written(const step_location* written, size_t count, fst_param_kind kind, size_t index) {
  size_t i;
  for (i = 0; i < count; ++i) {
    if (written[i].kind == (int)kind && written[i].index == index) return 1;
  }
  return 0;
}

static void check_steps(const fst_fusion* f, size_t ninputs, size_t noutputs) {
  step_location written[64];
  size_t nwritten = 0, steps = 0, kernels = 0, opaque_ops = 0, s, i;
  int kernel_seen[32] = {0}, opaque_seen[8] = {0};
  CHECK_OK(fst_fusion_step_count(f, &steps));
  CHECK_OK(fst_fusion_kernel_count(f, &kernels));
  CHECK_OK(fst_fusion_opaque_count(f, &opaque_ops));
  CHECK(steps == kernels + opaque_ops);
  if (kernels > COUNT_OF(kernel_seen) || opaque_ops > COUNT_OF(opaque_seen)) return;
  for (i = 0; i < ninputs; ++i) {
    written[nwritten].kind = FST_PARAM_INPUT;
    written[nwritten++].index = i;
  }
  for (s = 0; s < steps; ++s) {
    fst_step_kind kind;
    size_t index = 0;
    CHECK_OK(fst_fusion_step(f, s, &kind, &index));
    if (kind == FST_STEP_KERNEL) {
      const fst_kernel* k = NULL;
      size_t nparams = 0, p;
      CHECK(index < kernels && !kernel_seen[index]);
      kernel_seen[index] = 1;
      CHECK_OK(fst_fusion_kernel(f, index, &k));
      CHECK_OK(fst_kernel_param_count(k, &nparams));
      /* Kernel parameters do not say which are written: a parameter at a location nothing
       * wrote yet must be one the kernel writes, so the check records them all afterwards. */
      for (p = 0; p < nparams && nwritten < COUNT_OF(written); ++p) {
        fst_param_kind pk;
        size_t at;
        CHECK_OK(fst_kernel_param(k, p, &pk, &at, NULL));
        if (!location_written(written, nwritten, pk, at)) {
          written[nwritten].kind = pk;
          written[nwritten++].index = at;
        }
      }
    } else {
      const char* name = NULL;
      size_t noperands = 0, o, at;
      fst_param_kind pk;
      fst_dtype dtype;
      size_t rank;
      const int64_t* dims;
      CHECK(kind == FST_STEP_OPAQUE);
      CHECK(index < opaque_ops && !opaque_seen[index]);
      opaque_seen[index] = 1;
      CHECK_OK(fst_fusion_opaque(f, index, &name, &noperands, NULL));
      CHECK(name != NULL && strcmp(name, "matmul") == 0 && noperands == 2);
      for (o = 0; o < noperands; ++o) {
        CHECK_OK(fst_fusion_opaque_operand(f, index, o, &pk, &at, &dtype, &rank, &dims));
        CHECK(dtype == FST_F32 && rank == 2 && dims != NULL);
        CHECK(location_written(written, nwritten, pk, at));
      }
      CHECK_OK(fst_fusion_opaque_result(f, index, &pk, &at, &dtype, &rank, &dims));
      CHECK(pk == FST_PARAM_OUTPUT || pk == FST_PARAM_WORKSPACE);
      if (nwritten < COUNT_OF(written)) {
        written[nwritten].kind = pk;
        written[nwritten++].index = at;
      }
    }
  }
  for (i = 0; i < noutputs; ++i) CHECK(location_written(written, nwritten, FST_PARAM_OUTPUT, i));
}

static void fill(float* data, size_t count, unsigned seed) {
  size_t i;
  for (i = 0; i < count; ++i) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

static void test_block_runs(const fst_graph* g, fst_fusion_policy policy) {
  float x[kRows * kModel], w1[kModel * kHidden], w2[kHidden * kModel];
  float y[kRows * kModel], h[kRows * kHidden], want_y[kRows * kModel], want_h[kRows * kHidden];
  const void* inputs[3];
  void* outputs[2];
  void* want[2];
  fst_fuse_options* options = NULL;
  fst_fusion* f = NULL;
  callback_state state;
  size_t i, workspace_bytes = 0;
  unsigned char* workspace;
  double err = 0, norm = 0;

  fill(x, COUNT_OF(x), 1);
  fill(w1, COUNT_OF(w1), 2);
  fill(w2, COUNT_OF(w2), 3);
  inputs[0] = x;
  inputs[1] = w1;
  inputs[2] = w2;
  outputs[0] = y;
  outputs[1] = h;
  want[0] = want_y;
  want[1] = want_h;

  CHECK_OK(fst_fuse_options_create(&options));
  CHECK_OK(fst_fuse_options_set_policy(options, policy));
  CHECK_OK(fst_fuse(g, options, &f));
  fst_fuse_options_destroy(options);
  if (f == NULL) return;
  check_steps(f, 3, 2);
  if (getenv("FSTITCH_CAPI_TEST_NO_COMPILE") == NULL || getenv("FSTITCH_CAPI_TEST_NO_COMPILE")[0] == '\0') {
    memset(&state, 0, sizeof state);
    CHECK_OK(fst_graph_evaluate_reference_with_opaque(g, inputs, 3, want, 2, opaque_callback, &state));
    CHECK(state.matmuls == 2);
    CHECK_OK(fst_fusion_workspace_size(f, &workspace_bytes));
    workspace = (unsigned char*)malloc(workspace_bytes + 1);
    memset(workspace, 0xff, workspace_bytes + 1); /* NaN: a read of an unwritten value shows */
    for (i = 0; i < COUNT_OF(y); ++i) y[i] = NAN;
    for (i = 0; i < COUNT_OF(h); ++i) h[i] = NAN;
    memset(&state, 0, sizeof state);
    state.checked_queries = 1;
    CHECK_OK(fst_fusion_run_with_opaque(f, inputs, 3, outputs, 2, workspace, NULL, opaque_callback, &state));
    CHECK(state.matmuls == 2);
    for (i = 0; i < COUNT_OF(y); ++i) {
      err += (y[i] - want_y[i]) * (double)(y[i] - want_y[i]);
      norm += want_y[i] * (double)want_y[i];
    }
    for (i = 0; i < COUNT_OF(h); ++i) {
      err += (h[i] - want_h[i]) * (double)(h[i] - want_h[i]);
      norm += want_h[i] * (double)want_h[i];
    }
    CHECK(norm > 0 && sqrt(err / norm) < 1e-5); /* NaN fails too */

    /* A failing callback stops the run with its status and message. */
    memset(&state, 0, sizeof state);
    state.fail_with = FST_ERROR_SHAPE;
    CHECK_FAIL(fst_fusion_run_with_opaque(f, inputs, 3, outputs, 2, workspace, NULL, opaque_callback, &state),
               FST_ERROR_SHAPE, "fst_fusion_run_with_opaque", "ran out of patience");
    CHECK(state.calls == 1);
    CHECK(capi_contains(fst_last_error_message(), "\"matmul\""));
    memset(&state, 0, sizeof state);
    state.return_code = 77;
    CHECK_FAIL(fst_fusion_run_with_opaque(f, inputs, 3, outputs, 2, workspace, NULL, opaque_callback, &state),
               FST_ERROR_INVALID_ARGUMENT, "fst_fusion_run_with_opaque", "77");
    memset(&state, 0, sizeof state);
    state.fail_with = FST_ERROR_LAUNCH;
    CHECK_FAIL(fst_graph_evaluate_reference_with_opaque(g, inputs, 3, want, 2, opaque_callback, &state),
               FST_ERROR_LAUNCH, "fst_graph_evaluate_reference_with_opaque", "ran out of patience");
    free(workspace);
  }
  fst_fusion_destroy(f);
}

static void test_bad_arguments(const fst_graph* g) {
  fst_fusion* f = NULL;
  fst_step_kind kind = (fst_step_kind)77;
  size_t index = 77, count = 77, location = 77, rank = 77;
  const char* name = (const char*)SENTINEL_PTR;
  fst_param_kind pk = (fst_param_kind)77;
  fst_dtype dtype = (fst_dtype)77;
  const int64_t* dims = (const int64_t*)SENTINEL_PTR;
  /* Separate buffers of each value's size: overlapping ones would be refused first. */
  float x[kRows * kModel], w1[kModel * kHidden], w2[kHidden * kModel], y[kRows * kModel], h[kRows * kHidden];
  const void* inputs[3];
  void* outputs[2];
  inputs[0] = x;
  inputs[1] = w1;
  inputs[2] = w2;
  outputs[0] = y;
  outputs[1] = h;

  CHECK_OK(fst_fuse(g, NULL, &f));
  if (f == NULL) return;
  CHECK_FAIL(fst_fusion_step_count(NULL, &count), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_step_count",
             "fusion");
  CHECK_FAIL(fst_fusion_step_count(f, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_step_count",
             "out_count");
  CHECK_OK(fst_fusion_step_count(f, &count));
  CHECK_FAIL(fst_fusion_step(f, count, &kind, &index), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_step",
             "out of range");
  CHECK(kind == (fst_step_kind)77 && index == 77);
  CHECK_FAIL(fst_fusion_step(f, 0, NULL, &index), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_step", "out_kind");
  CHECK_FAIL(fst_fusion_step(f, 0, &kind, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_step", "out_index");
  CHECK_FAIL(fst_fusion_opaque_count(f, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque_count",
             "out_count");
  CHECK_OK(fst_fusion_opaque_count(f, &count));
  CHECK(count == 2);
  CHECK_FAIL(fst_fusion_opaque(f, 2, &name, &index, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque",
             "out of range");
  CHECK(name == (const char*)SENTINEL_PTR);
  CHECK_FAIL(fst_fusion_opaque(f, 0, NULL, &index, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque",
             "out_name");
  CHECK_FAIL(fst_fusion_opaque_operand(f, 0, 2, &pk, &location, &dtype, &rank, &dims),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque_operand", "out of range");
  CHECK_FAIL(fst_fusion_opaque_operand(f, 5, 0, &pk, &location, &dtype, &rank, &dims),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque_operand", "out of range");
  CHECK_FAIL(fst_fusion_opaque_operand(f, 0, 0, &pk, &location, &dtype, &rank, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque_operand", "out_dims");
  CHECK_FAIL(fst_fusion_opaque_result(f, 2, &pk, &location, &dtype, &rank, &dims), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_opaque_result", "out of range");
  CHECK_FAIL(fst_fusion_opaque_result(NULL, 0, &pk, &location, &dtype, &rank, &dims),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_opaque_result", "fusion");
  CHECK(pk == (fst_param_kind)77 && location == 77 && dtype == (fst_dtype)77 && rank == 77);
  CHECK(dims == (const int64_t*)SENTINEL_PTR);

  /* Plans with opaque steps need the callback. */
  CHECK_FAIL(fst_fusion_run(f, inputs, 3, outputs, 2, NULL, NULL), FST_ERROR_UNSUPPORTED, "fst_fusion_run",
             "fst_fusion_run_with_opaque");
  CHECK_FAIL(fst_fusion_run_with_opaque(f, inputs, 3, outputs, 2, NULL, NULL, NULL, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_run_with_opaque", "callback");
  CHECK_FAIL(fst_fusion_run_with_opaque(NULL, inputs, 3, outputs, 2, NULL, NULL, opaque_callback, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_run_with_opaque", "fusion");
  CHECK_FAIL(fst_fusion_run_with_opaque(f, inputs, 2, outputs, 2, NULL, NULL, opaque_callback, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_fusion_run_with_opaque", "input");
  CHECK_FAIL(fst_graph_evaluate_reference_with_opaque(g, inputs, 3, outputs, 2, NULL, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_graph_evaluate_reference_with_opaque", "callback");
  CHECK_FAIL(fst_graph_evaluate_reference_with_opaque(NULL, inputs, 3, outputs, 2, opaque_callback, NULL),
             FST_ERROR_INVALID_ARGUMENT, "fst_graph_evaluate_reference_with_opaque", "graph");
  CHECK_FAIL(fst_opaque_call_name(NULL, &name), FST_ERROR_INVALID_ARGUMENT, "fst_opaque_call_name", "call");
  fst_fusion_destroy(f);
}

/* Without opaque operations the callback may be NULL, and the plan is all kernel steps. */
static void test_no_opaque_ops(void) {
  fst_value x;
  fst_graph* g = capi_graph_with_x(&x);
  fst_fusion* f = NULL;
  float in[6] = {1, 2, 3, 4, 5, 6}, out[6], want[6];
  const void* inputs[1];
  void* outputs[1];
  size_t steps = 0, kernels = 0, i;
  fst_step_kind kind;
  size_t index;
  if (g == NULL) return;
  inputs[0] = in;
  CHECK_OK(fst_output(g, "e", fst_unary(g, FST_UNARY_EXP, x)));
  CHECK_OK(fst_fuse(g, NULL, &f));
  if (f != NULL) {
    CHECK_OK(fst_fusion_step_count(f, &steps));
    CHECK_OK(fst_fusion_kernel_count(f, &kernels));
    CHECK(steps == kernels);
    for (i = 0; i < steps; ++i) {
      CHECK_OK(fst_fusion_step(f, i, &kind, &index));
      CHECK(kind == FST_STEP_KERNEL && index == i);
    }
    if (getenv("FSTITCH_CAPI_TEST_NO_COMPILE") == NULL || getenv("FSTITCH_CAPI_TEST_NO_COMPILE")[0] == '\0') {
      outputs[0] = out;
      CHECK_OK(fst_fusion_run_with_opaque(f, inputs, 1, outputs, 1, NULL, NULL, NULL, NULL));
      outputs[0] = want;
      CHECK_OK(fst_graph_evaluate_reference_with_opaque(g, inputs, 1, outputs, 1, NULL, NULL));
      for (i = 0; i < 6; ++i) CHECK(fabsf(out[i] - want[i]) <= 1e-6f * want[i]);
    }
    fst_fusion_destroy(f);
  }
  fst_graph_destroy(g);
}

void test_opaque_steps(void) {
  static const fst_fusion_policy kPolicies[] = {FST_POLICY_STITCH, FST_POLICY_LOOP, FST_POLICY_NONE};
  fst_graph* g = build_block();
  size_t i;
  if (g != NULL) {
    for (i = 0; i < COUNT_OF(kPolicies); ++i) test_block_runs(g, kPolicies[i]);
    test_bad_arguments(g);
    fst_graph_destroy(g);
  }
  test_no_opaque_ops();
}
