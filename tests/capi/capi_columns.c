/* A column reduction split across blocks: fst_kernel_zeroed_workspace (bad arguments leave
 * the outputs untouched), its scratch parameters (workspace, no graph value), and runs through
 * fst_fusion_run and fst_kernel_launch with a workspace full of garbage, which must clear the
 * counters themselves. The runs are skipped when FSTITCH_CAPI_TEST_NO_COMPILE is set. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define ROWS 4096
#define COLS 40

static int compile_allowed(void) {
  const char* skip = getenv("FSTITCH_CAPI_TEST_NO_COMPILE");
  return skip == NULL || skip[0] == '\0';
}

/* Relative L2 distance of `got` from `want`; NaN anywhere fails. */
static int close_enough(const float* got, const float* want, size_t count) {
  double err = 0, norm = 0;
  size_t i;
  for (i = 0; i < count; ++i) {
    const double d = (double)got[i] - (double)want[i];
    if (got[i] != got[i]) return 0;
    err += d * d;
    norm += (double)want[i] * (double)want[i];
  }
  return sqrt(err) <= 1e-5 * sqrt(norm) + 1e-30;
}

static void run_split_kernel(const fst_graph* g, const fst_fusion* fusion, const fst_kernel* kernel,
                             size_t workspace_bytes) {
  float* x = (float*)malloc(sizeof(float) * ROWS * COLS);
  unsigned char* workspace = (unsigned char*)malloc(workspace_bytes);
  float want[COLS], got[COLS];
  const void* inputs[1];
  void* outputs[1];
  void* args[8];
  size_t i, params = 0;
  CHECK(x != NULL && workspace != NULL);
  if (x == NULL || workspace == NULL) {
    free(x);
    free(workspace);
    return;
  }
  for (i = 0; i < (size_t)ROWS * COLS; ++i) x[i] = (float)((int)(i % 23) - 11) * 0.125f + 0.0625f;
  inputs[0] = x;
  outputs[0] = want;
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, 1, outputs, 1));

  /* A run clears the counters, whatever the workspace held. */
  memset(workspace, 0xff, workspace_bytes);
  memset(got, 0xff, sizeof got);
  outputs[0] = got;
  CHECK_OK(fst_fusion_run(fusion, inputs, 1, outputs, 1, workspace, NULL));
  CHECK(close_enough(got, want, COLS));

  /* So does a launch of the kernel alone, at the argument that holds them. */
  memset(workspace, 0xff, workspace_bytes);
  memset(got, 0xff, sizeof got);
  CHECK_OK(fst_kernel_param_count(kernel, &params));
  CHECK(params <= 8);
  for (i = 0; i < params && i < 8; ++i) {
    fst_param_kind kind = FST_PARAM_INPUT;
    size_t index = 0;
    CHECK_OK(fst_kernel_param(kernel, i, &kind, &index, NULL));
    args[i] = kind == FST_PARAM_INPUT ? (void*)x : kind == FST_PARAM_OUTPUT ? (void*)got : workspace + index;
  }
  CHECK_OK(fst_kernel_launch(kernel, args, params, NULL));
  CHECK(close_enough(got, want, COLS));
  free(x);
  free(workspace);
}

void test_split_reductions(void) {
  const int64_t dims[2] = {ROWS, COLS};
  const int64_t axis0[1] = {0};
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion = NULL;
  const fst_kernel* kernel = NULL;
  size_t offset = 77, bytes = 77, workspace_bytes = 0, params = 0, i, holders = 0;
  fst_value x;
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 2, dims);
  fst_output(g, "r", fst_reduce(g, FST_REDUCE_SUM, x, 1, axis0, 0));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion == NULL) {
    fst_graph_destroy(g);
    return;
  }
  CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
  CHECK_OK(fst_fusion_workspace_size(fusion, &workspace_bytes));

  CHECK_FAIL(fst_kernel_zeroed_workspace(NULL, &offset, &bytes), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_zeroed_workspace", "kernel");
  CHECK_FAIL(fst_kernel_zeroed_workspace(kernel, NULL, &bytes), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_zeroed_workspace", "out_offset");
  CHECK_FAIL(fst_kernel_zeroed_workspace(kernel, &offset, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_zeroed_workspace", "out_bytes");
  CHECK(offset == 77 && bytes == 77);

  /* Few tiles of 40 columns over 4096 rows: the reduced axis is split across blocks, whose
   * counters lie in one workspace parameter that holds no graph value. */
  CHECK_OK(fst_kernel_zeroed_workspace(kernel, &offset, &bytes));
  CHECK(bytes > 0 && offset + bytes <= workspace_bytes);
  CHECK_OK(fst_kernel_param_count(kernel, &params));
  for (i = 0; i < params; ++i) {
    fst_param_kind kind = FST_PARAM_INPUT;
    size_t index = 0;
    fst_value value = 77;
    CHECK_OK(fst_kernel_param(kernel, i, &kind, &index, &value));
    if (kind == FST_PARAM_WORKSPACE) {
      CHECK(value == FST_VALUE_INVALID);
      if (index <= offset) ++holders;
    }
  }
  CHECK(holders >= 1);
  if (compile_allowed()) run_split_kernel(g, fusion, kernel, workspace_bytes);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);

  /* An elementwise kernel needs nothing zeroed. */
  g = capi_new_graph();
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 2, dims);
  fst_output(g, "y", fst_unary(g, FST_UNARY_EXP, x));
  fusion = NULL;
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion != NULL) {
    CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
    offset = bytes = 77;
    CHECK_OK(fst_kernel_zeroed_workspace(kernel, &offset, &bytes));
    CHECK(offset == 0 && bytes == 0);
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}
