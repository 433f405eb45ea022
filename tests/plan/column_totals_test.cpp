// Column totals: a norm's backward (dx by rows, dgamma and dbeta by columns) is one kernel
// that reads x and dy once at the sizes models train at; its partials are the only traffic
// beyond the lower bound, and the plan is the same in every run.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/cost_model.hpp"
#include "plan/explore.hpp"
#include "plan/launch_grid.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

ValueId row_mean(Graph& g, ValueId x, const Dims& dims) {
  return build_broadcast(g, build_reduce(g, OpKind::kReduceMean, x, {1}, true), dims);
}

TEST(ColumnTotals, LayerNormBackwardReadsXAndDyOnce) {
  for (const auto& [rows, cols] :
       {std::pair<int64_t, int64_t>{4096, 1024}, {16384, 768}, {512, 768}, {8192, 4096}}) {
    // f32: bf16 rows of these widths mostly keep their row cache in shared memory, which
    // column totals do not share, and the model then keeps dgamma and dbeta apart.
    for (DType dtype : {DType::kF32}) {
      const Graph g = testing::layer_norm_backward(rows, cols, dtype);
      const FusionPlan p = plan(g);
      ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
      const KernelSpec& s = p.kernels[0].spec;
      EXPECT_EQ(s.column_totals.size(), 2u);
      // x, dy and w read once, dx, dgamma and dbeta written once; the partials twice.
      EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes + 2 * s.column_total_traffic_bytes) << dump_plan(g, p);
      EXPECT_EQ(s.grid_policy, GridPolicy::kFixed);
      // Two combining steps of about the square root of the grid each.
      EXPECT_GE(s.column_total_group * s.column_total_groups, s.grid_blocks);
      EXPECT_LE(s.column_total_group, s.grid_blocks);
      // The grid is a full wave at the planned occupancy, or held to one, two or four blocks
      // per SM, which the model may prefer for their fewer partials.
      KernelSpec wave = s;
      wave.grid_policy = GridPolicy::kStrided;
      const int64_t full = grid_for_occupancy(wave, s.planned_blocks_per_sm, p.arch.sm_count);
      const int64_t sms = p.arch.sm_count;
      EXPECT_TRUE(s.grid_blocks == full || s.grid_blocks == sms || s.grid_blocks == 2 * sms ||
                  s.grid_blocks == 4 * sms)
          << s.grid_blocks << " blocks\n"
          << dump_plan(g, p);
      // At the large shapes the partials are a small part of the traffic (the 1584 blocks of
      // a full wave at 8192 x 4096 wrote more partials than the second kernel cost).
      if (rows * cols >= 4096 * 1024) {
        EXPECT_LE(2 * s.column_total_traffic_bytes, p.lower_bound_bytes / 10) << dump_plan(g, p);
      }
      EXPECT_EQ(dump_plan(g, p), dump_plan(g, plan(g)));
    }
  }
}

// A column total is complete only once every block has added its rows: a member that reads
// it is computed after the kernel's grid barrier, in the second walk over the rows, or in
// another kernel.
TEST(ColumnTotals, AColumnTotalFeedsOnlyTheRowsAfterItsGridBarrier) {
  for (const Dims& dims : {Dims{256, 128}, Dims{4096, 1024}}) {
    Graph g;
    const ValueId x = build_input(g, "x", DType::kF32, dims);
    const ValueId rows = row_mean(g, x, dims);
    const ValueId total = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
    build_output(g, "y",
                 build_binary(g, OpKind::kMul, build_binary(g, OpKind::kSub, x, rows),
                              build_broadcast(g, total, dims)));
    const FusionPlan p = plan(g);
    for (const PlannedKernel& k : p.kernels) {
      for (ValueId v : k.spec.column_totals) {
        for (ValueId m : k.spec.members) {
          const auto& operands = g.node(m).operands;
          if (std::find(operands.begin(), operands.end(), v) == operands.end()) continue;
          EXPECT_EQ(k.spec.stages, RowStages::kRowsAfterTotals) << dump_plan(g, p);
          EXPECT_TRUE(k.spec.after_column_totals(m)) << dump_plan(g, p);
          EXPECT_EQ(k.launch, LaunchKind::kCooperative) << dump_plan(g, p);
        }
      }
    }
  }
}

// A column-total kernel's grid is sized from the register estimate; where the model scores a
// larger grid faster at an occupancy the estimate rules out (a Sinkhorn step of [32768, 768]
// bf16 rows, one kernel with a grid barrier), that grid is the ceiling a launch may grow to when the
// compiled kernel fits more blocks: the workspace holds its partials and counters. Where
// the model scores the planned grid best (the f32 LayerNorm backward, whose rows read ahead
// keep enough bytes in flight), there is none.
TEST(ColumnTotals, AFixedGridMayGrowToTheCeilingTheModelScoresBest) {
  const Graph g = testing::sinkhorn_step(32768, 768, DType::kBF16);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const PlannedKernel& k = p.kernels[0];
  const KernelSpec& s = k.spec;
  ASSERT_GT(s.grid_ceiling, s.grid_blocks) << dump_plan(g, p);
  EXPECT_EQ(s.grid_policy, GridPolicy::kFixed);
  const int sms = p.arch.sm_count;
  const auto per_sm = static_cast<int>((s.grid_ceiling + sms - 1) / sms);
  const KernelSpec grown = launched_at_grid(g, s, s.grid_ceiling);
  EXPECT_LT(estimate_kernel_at_occupancy(p.arch, g, grown, per_sm).total_seconds,
            estimate_kernel_at_occupancy(p.arch, g, s, s.planned_blocks_per_sm).total_seconds);
  // The workspace holds the ceiling's partials and counters, beside the planned traffic.
  EXPECT_GE(s.column_total_partial_bytes, grown.column_total_traffic_bytes);
  EXPECT_GT(grown.column_total_traffic_bytes, s.column_total_traffic_bytes);
  const int64_t groups = (s.grid_ceiling + s.column_total_group - 1) / s.column_total_group;
  EXPECT_GE(k.zeroed_workspace.bytes, static_cast<size_t>(4 * (groups + 2)));
  EXPECT_EQ(launch_grid(k, per_sm, sms), s.grid_ceiling);
  EXPECT_EQ(launch_grid(k, s.planned_blocks_per_sm, sms), s.grid_blocks);
  EXPECT_NE(dump_plan(g, p).find("up to " + std::to_string(s.grid_ceiling) + " blocks"), std::string::npos);

  const Graph f32 = testing::layer_norm_backward(8192, 1024, DType::kF32);
  const FusionPlan q = plan(f32);
  for (const PlannedKernel& kernel : q.kernels) {
    EXPECT_EQ(kernel.spec.grid_ceiling, 0) << dump_plan(f32, q);
    EXPECT_EQ(launch_grid(kernel, 32, q.arch.sm_count), kernel.spec.grid_blocks);
  }
}

// The passes after the merge analyze again only kernels that may hold a column total: a
// kernel whose every reduction sums its operand's last axis holds none, and the filter
// never drops a kernel that holds one.
TEST(ColumnTotals, OnlyKernelsWithAReductionOffTheLastAxisMayHoldTotals) {
  Graph g;
  const Dims dims{64, 32};
  const ValueId x = build_input(g, "x", DType::kF32, dims);
  const ValueId rows = build_reduce(g, OpKind::kReduceSum, x, {1}, true);
  const ValueId centered = build_binary(g, OpKind::kSub, x, build_broadcast(g, rows, dims));
  const ValueId columns = build_reduce(g, OpKind::kReduceSum, centered, {0}, true);
  const ValueId column = build_input(g, "c", DType::kF32, Dims{64, 1});
  const ValueId whole_column = build_reduce(g, OpKind::kReduceSum, column, {0, 1}, false);
  const ValueId cube = build_input(g, "m", DType::kF32, Dims{4, 8, 16});
  const ValueId middle = build_reduce(g, OpKind::kReduceMax, cube, {1}, false);
  EXPECT_FALSE(may_hold_column_totals(g, {rows, centered}));
  EXPECT_TRUE(may_hold_column_totals(g, {rows, centered, columns}));
  // A last axis of one element says nothing about the columns: kept as possible.
  EXPECT_TRUE(may_hold_column_totals(g, {whole_column}));
  EXPECT_TRUE(may_hold_column_totals(g, {middle}));
  for (const testing::ShapedGraph& shaped : testing::reduction_graphs()) {
    for (const Dims& shape : {shaped.dims, shaped.check_dims}) {
      const Graph built = shaped.build(shape, DType::kF32);
      const FusionPlan p = plan(built);
      for (const PlannedKernel& k : p.kernels) {
        if (k.spec.column_totals.empty()) continue;
        EXPECT_TRUE(may_hold_column_totals(built, k.spec.members)) << shaped.name << "\n"
                                                                   << dump_plan(built, p);
      }
    }
  }
}

}  // namespace
}  // namespace fstitch
