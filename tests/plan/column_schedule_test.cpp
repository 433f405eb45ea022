// Column and middle-axis reductions fill the device: properties of the plan (waves, bytes,
// the zeroed workspace, the dump), not schedule names; and the tiling choice on its inputs.
#include <gtest/gtest.h>

#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"
#include "plan/schedule_columns.hpp"

namespace fstitch::testing {
namespace {

Graph column_sum(DType dtype, const Dims& dims, const std::vector<int64_t>& axes) {
  Graph g;
  const ValueId x = build_input(g, "x", dtype, dims);
  build_output(g, "r", build_reduce(g, OpKind::kReduceSum, x, axes, false));
  return g;
}

uint64_t input_bytes(const Graph& g) {
  uint64_t total = 0;
  for (ValueId v : g.inputs()) total += value_bytes(g, v);
  return total;
}

TEST(ColumnSchedule, BiasGradientLaunchesAFullWave) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Graph g = column_sum(t, {8192, 1024}, {0});
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    EXPECT_GE(p.kernels[0].spec.grid_blocks, p.arch.sm_count) << dump_plan(g, p);
    EXPECT_LE(static_cast<double>(p.planned_bytes), 1.05 * static_cast<double>(input_bytes(g)))
        << dump_plan(g, p);
  }
}

TEST(ColumnSchedule, MiddleAxisReductionFillsAWave) {
  const Graph g = column_sum(DType::kF32, {64, 4096, 64}, {1});
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const KernelSpec& s = p.kernels[0].spec;
  // The blocks resident at once, with the registers a column tile takes.
  const int64_t wave =
      static_cast<int64_t>(p.arch.sm_count) * resident_blocks_per_sm(p.arch, s.block_threads);
  // Nearly a whole wave, and no work item left for a second round.
  EXPECT_GE(static_cast<double>(s.grid_blocks), 0.9 * static_cast<double>(wave)) << dump_plan(g, p);
  EXPECT_LE(s.column.tiles * s.column.split, wave) << dump_plan(g, p);
  EXPECT_LE(static_cast<double>(p.planned_bytes), 1.05 * static_cast<double>(input_bytes(g)))
      << dump_plan(g, p);
}

TEST(ColumnSchedule, ASplitKernelHasItsCountersZeroedAndTheDumpSaysSo) {
  const Graph g = column_sum(DType::kF32, {8192, 1024}, {0});
  const FusionPlan p = plan(g);
  const PlannedKernel& k = p.kernels.at(0);
  ASSERT_GT(k.zeroed_workspace.bytes, 0u);
  EXPECT_LE(k.zeroed_workspace.offset + k.zeroed_workspace.bytes, p.workspace_bytes);
  // The zeroed range is one scratch parameter of the kernel, which holds no graph value.
  size_t holders = 0;
  for (const KernelParam& param : k.params) {
    if (param.kind != ParamKind::kWorkspace || !param.is_scratch()) continue;
    EXPECT_EQ(param.value, -1);
    if (k.zeroed_workspace.offset >= param.index &&
        k.zeroed_workspace.offset + k.zeroed_workspace.bytes <= param.index + param.scratch_bytes)
      ++holders;
  }
  EXPECT_EQ(holders, 1u);
  const std::string dump = dump_plan(g, p);
  EXPECT_NE(dump.find("split " + std::to_string(k.spec.column.split) + " ways across blocks"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("zeroed before the launch"), std::string::npos) << dump;
}

TEST(ColumnSchedule, ManyTilesNeedNoSplitAndNoScratch) {
  // 4096 outer indices of 256 inner elements: tiles alone fill the device.
  const Graph g = column_sum(DType::kF32, {4096, 64, 256}, {1});
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_EQ(p.kernels[0].zeroed_workspace.bytes, 0u);
  EXPECT_EQ(p.workspace_bytes, 0u) << dump_plan(g, p);
  EXPECT_GE(p.kernels[0].spec.grid_blocks, p.arch.sm_count);
}

TEST(ColumnTiling, SplitsOnlyWhileTheTilesDoNotFillAWave) {
  const ArchParams arch = *arch_params(90);
  ColumnShape shape;
  shape.outer = 1;
  shape.reduced = 8192;
  shape.inner = 1024;
  shape.widest_element_bytes = 4;
  shape.input_bytes = 8192ull * 1024 * 4;
  shape.accumulator_bytes = 4;
  const ColumnTiling t = choose_column_tiling(shape, arch);
  EXPECT_EQ(t.vector, 4);  // 16-byte accesses
  EXPECT_GT(t.split, 1);
  EXPECT_GE(t.grid_blocks, arch.sm_count);
  EXPECT_LE(static_cast<double>(2 * t.partial_bytes),
            kPartialTrafficShare * static_cast<double>(shape.input_bytes));
  EXPECT_LE(t.chunk * (t.split - 1), shape.reduced);  // no empty chunk
  EXPECT_GE(t.chunk * t.split, shape.reduced);

  shape.outer = 100000;  // the tiles alone fill many waves
  const ColumnTiling full = choose_column_tiling(shape, arch);
  EXPECT_EQ(full.split, 1);
  EXPECT_EQ(full.partial_bytes, 0u);
}

TEST(ColumnTiling, OddInnerExtentsTakeScalarLanes) {
  ColumnShape shape;
  shape.outer = 3;
  shape.reduced = 1000;
  shape.inner = 7;
  shape.widest_element_bytes = 2;
  shape.input_bytes = 3 * 1000 * 7 * 2;
  shape.accumulator_bytes = 4;
  const ColumnTiling t = choose_column_tiling(shape, *arch_params(80));
  EXPECT_EQ(t.vector, 1);
  EXPECT_GE(static_cast<int64_t>(t.lanes) * t.vector, 7);
  EXPECT_LE(t.block_threads, 256);
}

}  // namespace
}  // namespace fstitch::testing
