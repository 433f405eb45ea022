/* Rows split across a group of blocks: fst_kernel_cluster_blocks (bad arguments leave the
 * output untouched), the launch kind of a split row planned for sm_90 (clusters), and a run on
 * the host backend against the reference evaluator. The run is skipped when
 * FSTITCH_CAPI_TEST_NO_COMPILE is set. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define ROWS 2
#define COLS 20000

/* y = x / sum(x, axis 1) over [ROWS, COLS] f32. */
static fst_graph* row_normalize(void) {
  const int64_t dims[2] = {ROWS, COLS};
  const int64_t axis1[1] = {1};
  fst_graph* g = capi_new_graph();
  fst_value x, s;
  if (g == NULL) return NULL;
  x = fst_input(g, "x", FST_F32, 2, dims);
  s = fst_reduce(g, FST_REDUCE_SUM, x, 1, axis1, 1);
  fst_output(g, "y", fst_binary(g, FST_BINARY_DIV, x, fst_broadcast(g, s, 2, dims)));
  return g;
}

static void run_and_compare(const fst_graph* g, const fst_fusion* fusion) {
  const char* skip = getenv("FSTITCH_CAPI_TEST_NO_COMPILE");
  float* x = (float*)malloc(sizeof(float) * ROWS * COLS);
  float* want = (float*)malloc(sizeof(float) * ROWS * COLS);
  float* got = (float*)malloc(sizeof(float) * ROWS * COLS);
  size_t workspace_bytes = 0, i;
  unsigned char* workspace = NULL;
  const void* inputs[1];
  void* outputs[1];
  double err = 0, norm = 0;
  if (skip != NULL && skip[0] != '\0') goto done;
  CHECK(x != NULL && want != NULL && got != NULL);
  if (x == NULL || want == NULL || got == NULL) goto done;
  for (i = 0; i < (size_t)ROWS * COLS; ++i) x[i] = 0.5f + (float)(i % 37) * 0.03125f;
  inputs[0] = x;
  outputs[0] = want;
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, 1, outputs, 1));
  CHECK_OK(fst_fusion_workspace_size(fusion, &workspace_bytes));
  workspace = (unsigned char*)malloc(workspace_bytes + 1);
  CHECK(workspace != NULL);
  if (workspace == NULL) goto done;
  memset(workspace, 0xff, workspace_bytes + 1); /* the run clears the arrival counters itself */
  outputs[0] = got;
  CHECK_OK(fst_fusion_run(fusion, inputs, 1, outputs, 1, workspace, NULL));
  for (i = 0; i < (size_t)ROWS * COLS; ++i) {
    const double d = (double)got[i] - (double)want[i];
    err += d * d;
    norm += (double)want[i] * (double)want[i];
  }
  CHECK(sqrt(err) <= 1e-5 * sqrt(norm));
done:
  free(x);
  free(want);
  free(got);
  free(workspace);
}

void test_split_rows(void) {
  fst_graph* g = row_normalize();
  fst_fusion* fusion = NULL;
  const fst_kernel* kernel = NULL;
  fst_launch_kind kind = FST_LAUNCH_REGULAR;
  uint32_t blocks = 77, grid[3], block[3];
  size_t shared = 0;
  if (g == NULL) return;
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion == NULL) {
    fst_graph_destroy(g);
    return;
  }
  CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
  CHECK_FAIL(fst_kernel_cluster_blocks(NULL, &blocks), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_cluster_blocks",
             "kernel");
  CHECK_FAIL(fst_kernel_cluster_blocks(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_cluster_blocks",
             "out_blocks");
  CHECK(blocks == 77);
  /* Two rows cannot fill an sm_90 device with a block each: clusters of blocks split them. */
  CHECK_OK(fst_kernel_launch_kind(kernel, &kind));
  CHECK(kind == FST_LAUNCH_CLUSTER);
  CHECK_OK(fst_kernel_cluster_blocks(kernel, &blocks));
  CHECK(blocks >= 2 && blocks <= 8);
  CHECK_OK(fst_kernel_launch_config(kernel, grid, block, &shared));
  CHECK(grid[0] % blocks == 0 && grid[0] >= blocks);
  run_and_compare(g, fusion);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}
