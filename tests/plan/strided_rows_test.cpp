// Reductions whose rows are not contiguous (a BatchNorm's channels: axes 0, 2 and 3 of
// [N, C, H, W]) get the row schedules, their elements' flat indices unraveled, instead of a
// thread walking each row.
#include <gtest/gtest.h>

#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

// ResNet-50's first BatchNorm at batch 32: one kernel at the lower bound (x read once, y
// written once: the rows of 100352 elements kept on chip across the two passes by groups
// of blocks), on every SM, in 16-byte vectors.
TEST(StridedRows, BatchNormIsOneKernelAtTheLowerBound) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Graph g = testing::batch_norm_training({32, 64, 56, 56}, t);
    const FusionPlan p = testing::plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const KernelSpec& s = p.kernels[0].spec;
    EXPECT_FALSE(s.contiguous_rows);
    EXPECT_NE(s.schedule, ScheduleKind::kThreadPerRow) << dump_plan(g, p);
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
    EXPECT_GE(s.grid_blocks, p.arch.sm_count) << dump_plan(g, p);
    // 16-byte vectors within the runs of H x W = 3136 elements.
    EXPECT_EQ(s.vector_width * static_cast<int>(dtype_size(t)), 16) << dump_plan(g, p);
    // Memory bound by the model: the estimate within twice the lower bound's copy time.
    const double copy =
        static_cast<double>(p.lower_bound_bytes) / (p.arch.dram_bandwidth * p.arch.copy_efficiency);
    EXPECT_LT(p.est_seconds, 2 * copy + p.arch.launch_overhead_seconds) << dump_plan(g, p);
  }
}

// One kernel at the lower bound on nine in ten SMs at least, f32 and bf16.
void expect_one_kernel_at_the_lower_bound(Graph (*build)(DType)) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Graph g = build(t);
    const FusionPlan p = testing::plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
    EXPECT_GE(static_cast<double>(p.kernels[0].spec.grid_blocks), 0.9 * p.arch.sm_count) << dump_plan(g, p);
  }
}

// Its backward reads x and dy once and writes dx once (dgamma and dbeta are the same
// kernel's per-channel reductions); bf16 runs its 64 channels in groups of two blocks on 128
// of the 132 SMs.
TEST(StridedRows, BatchNormBackwardReadsXAndDyOnce) {
  expect_one_kernel_at_the_lower_bound([](DType t) {
    return testing::batch_norm_backward({32, 64, 56, 56}, t);
  });
}

// GroupNorm channels last (statistics over axes 1 and 3 of [N, HW, G, C/G]) is one kernel
// at the lower bound: the affine after the reshape back to [N, HW, C] reads each element at
// the flat index the statistics' rows unravel.
TEST(StridedRows, ChannelsLastGroupNormIsOneKernelAtTheLowerBound) {
  expect_one_kernel_at_the_lower_bound([](DType t) {
    return testing::group_norm_channels_last({8, 512, 4096, 32}, t);
  });
}

// Reduced axes in two runs with the innermost axis kept (a sum over axes 0 and 2 of
// [64, 128, 512, 4]): a column tile whose reduced rows unravel, at the lower bound (a thread
// walking each of the 512 outputs before: 6.1 ms estimated).
TEST(StridedRows, SplitReducedAxesBeforeAKeptInnermostAxisAreAColumnTile) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    Graph g;
    const ValueId x = build_input(g, "x", t, {64, 128, 512, 4});
    build_output(g, "s", build_reduce(g, OpKind::kReduceSum, x, {0, 2}, false));
    const FusionPlan p = testing::plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    EXPECT_EQ(p.kernels[0].spec.schedule, ScheduleKind::kColumnTile) << dump_plan(g, p);
    EXPECT_LE(static_cast<double>(p.planned_bytes), 1.01 * static_cast<double>(p.lower_bound_bytes))
        << dump_plan(g, p);
    EXPECT_GE(p.kernels[0].spec.grid_blocks, p.arch.sm_count) << dump_plan(g, p);
  }
}

// The unraveled index: one coordinate per run of adjacent kept or reduced axes.
TEST(StridedRows, AdjacentAxesOfOneKindUnravelAsOne) {
  KernelSpec s;
  s.domain = {32, 64, 56, 56};
  s.reduced_axes = {0, 2, 3};
  EXPECT_EQ(unraveled_axis_runs(s), 3);  // [32] reduced, [64] kept, [56 x 56] reduced
  s.domain = {1, 64, 56, 56};
  EXPECT_EQ(unraveled_axis_runs(s), 2);  // an axis of 1 adds nothing
  s.domain = {8, 4, 6};
  s.reduced_axes = {0, 2};
  EXPECT_EQ(unraveled_axis_runs(s), 3);
}

}  // namespace
}  // namespace fstitch
