/* fst_kernel_grid_for_occupancy: the grid fstitch's launcher uses at an occupancy (one wave,
 * or the kernel's work units when fewer, at least one block), beside the planned grid of
 * fst_kernel_launch_config; bad arguments fail and leave the grid untouched. */
#include <stdint.h>

#include "capi_check.h"

void test_grid_for_occupancy(void) {
  fst_graph* g = capi_new_graph();
  const int64_t dims[2] = {8192, 1024};
  fst_value x = fst_input(g, "x", FST_F32, 2, dims);
  fst_fusion* fusion = NULL;
  const fst_kernel* kernel = NULL;
  uint32_t planned[3] = {0, 0, 0}, block[3] = {0, 0, 0}, grid[3] = {0, 0, 0}, all_work[3] = {0, 0, 0};
  uint32_t untouched[3] = {77, 77, 77};
  size_t shared = 0;
  CHECK_OK(fst_output(
      g, "y",
      fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, fst_constant_f64(g, FST_F32, 2.0)),
                 fst_constant_f64(g, FST_F32, 1.0))));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion == NULL) {
    fst_graph_destroy(g);
    return;
  }
  CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
  CHECK_OK(fst_kernel_launch_config(kernel, planned, block, &shared));

  /* As many blocks as the SMs could hold, and more: the work units, at least the planned grid. */
  CHECK_OK(fst_kernel_grid_for_occupancy(kernel, 1u << 20, 1u << 11, all_work));
  CHECK(all_work[0] >= planned[0] && all_work[1] == 1 && all_work[2] == 1);
  /* A wave of 12 blocks on 132 SMs, or the work units when fewer. */
  CHECK_OK(fst_kernel_grid_for_occupancy(kernel, 12, 132, grid));
  CHECK(grid[0] == (all_work[0] < 12u * 132u ? all_work[0] : 12u * 132u));
  CHECK(grid[1] == 1 && grid[2] == 1);
  /* One block on one SM: one block. */
  CHECK_OK(fst_kernel_grid_for_occupancy(kernel, 1, 1, grid));
  CHECK(grid[0] == 1);

  CHECK_FAIL(fst_kernel_grid_for_occupancy(NULL, 4, 132, untouched), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_grid_for_occupancy", "kernel");
  CHECK_FAIL(fst_kernel_grid_for_occupancy(kernel, 4, 132, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_grid_for_occupancy", "out_grid");
  CHECK_FAIL(fst_kernel_grid_for_occupancy(kernel, 0, 132, untouched), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_grid_for_occupancy", "blocks_per_multiprocessor");
  CHECK_FAIL(fst_kernel_grid_for_occupancy(kernel, 4, 0, untouched), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_grid_for_occupancy", "multiprocessors");
  CHECK(untouched[0] == 77 && untouched[1] == 77 && untouched[2] == 77);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}
