// Column and middle-axis reductions fill the device: properties of the plan (waves, bytes,
// the zeroed workspace, the dump), not schedule names; and the tiling choice on its inputs.
#include <gtest/gtest.h>

#include "common/reduction_graphs.hpp"
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

// Softmax down the columns (and down a middle axis) is one kernel: its passes meet as groups
// of a tile's blocks, resident together in one wave (whole groups of it), and where the data
// fits the registers of the device it reads x once and writes y once (the partials and
// totals aside, within a few percent).
TEST(ColumnSchedule, ColumnSoftmaxIsOneKernelAtTheLowerBound) {
  std::vector<Graph> graphs;
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 1024}, {8192, 512}})
      graphs.push_back(column_softmax(rows, cols, t));
  }
  // At 4 MB of bf16 the f32 partials of 64 chunks per column are 9% more: f32 only.
  graphs.push_back(column_softmax(4096, 256, DType::kF32));
  graphs.push_back(column_pass_graph(ColumnPassGraph::kSoftmax, DType::kF32, {64, 512, 64}, {1}));
  for (const Graph& g : graphs) {
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const PlannedKernel& k = p.kernels[0];
    EXPECT_EQ(k.spec.schedule, ScheduleKind::kColumnTile) << dump_plan(g, p);
    EXPECT_LE(static_cast<double>(p.planned_bytes), 1.06 * static_cast<double>(p.lower_bound_bytes))
        << dump_plan(g, p);
    const int64_t wave = int64_t{p.arch.sm_count} * k.spec.planned_blocks_per_sm;
    EXPECT_GE(static_cast<double>(k.spec.grid_blocks), 0.9 * static_cast<double>(wave)) << dump_plan(g, p);
    EXPECT_LE(k.spec.grid_blocks, wave) << dump_plan(g, p);
    ASSERT_TRUE(k.spec.column.releases_groups()) << dump_plan(g, p);
    EXPECT_EQ(k.launch, LaunchKind::kCooperative);
    EXPECT_EQ(k.spec.grid_blocks % k.spec.column.split, 0);
    EXPECT_NE(dump_plan(g, p).find("releases the group with the totals"), std::string::npos);
  }
}

// Larger than the registers of the device (50 MB of f32, 25 MB of bf16 on 33 MB of H100
// registers): still one kernel, whose blocks keep their chunks in shared memory across the
// passes. The bf16 chunks fit whole (x read once: the lower bound, the partials aside); the
// f32 chunks half fit, and only the other half is read again, once: the sum of exp(x - max)
// accumulates beside the max (an online sum), so the store pass is the only other.
TEST(ColumnSchedule, ColumnSoftmaxBeyondTheRegistersKeepsItsChunksInSharedMemory) {
  for (DType t : {DType::kBF16, DType::kF32}) {
    const Graph g = column_softmax(16384, 768, t);
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const KernelSpec& s = p.kernels[0].spec;
    EXPECT_EQ(s.column.passes, s.online_sums.empty() ? 3 : 2) << dump_plan(g, p);
    ASSERT_EQ(s.cache, RowCache::kShared) << dump_plan(g, p);
    EXPECT_GT(s.column.shared_rows, 0);
    EXPECT_LE(s.shared_cache_bytes, static_cast<size_t>(p.arch.max_shared_bytes_per_block));
    const std::string dump = dump_plan(g, p);
    EXPECT_NE(dump.find("kept in shared memory across the passes"), std::string::npos) << dump;
    if (t == DType::kBF16) {
      EXPECT_EQ(s.column.shared_rows, s.column.rows_per_thread) << dump;
      EXPECT_LE(static_cast<double>(p.planned_bytes), 1.02 * static_cast<double>(p.lower_bound_bytes))
          << dump;
    } else {
      // x read once, its unkept half once more, y written once.
      EXPECT_LT(s.column.shared_rows, s.column.rows_per_thread) << dump;
      EXPECT_EQ(s.online_sums.size(), 1u) << dump;
      EXPECT_NE(dump.find("read again by each pass (the whole chunk needs"), std::string::npos) << dump;
      EXPECT_LE(static_cast<double>(p.planned_bytes), 1.27 * static_cast<double>(p.lower_bound_bytes))
          << dump;
    }
  }
}

// Normalization down the columns whose tiles fill the device alone: a block holds each tile
// whole across its passes, no group and no scratch.
TEST(ColumnSchedule, ManyTilesPassOverTheirColumnsInOneBlock) {
  const Graph g = column_pass_graph(ColumnPassGraph::kNormalize, DType::kF32, {4096, 32, 256}, {1});
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const KernelSpec& s = p.kernels[0].spec;
  EXPECT_EQ(s.column.split, 1) << dump_plan(g, p);
  EXPECT_GT(s.column.passes, 1) << dump_plan(g, p);
  EXPECT_EQ(p.kernels[0].launch, LaunchKind::kRegular);
  EXPECT_EQ(p.workspace_bytes, 0u) << dump_plan(g, p);
  EXPECT_LE(static_cast<double>(p.planned_bytes), 1.01 * static_cast<double>(p.lower_bound_bytes))
      << dump_plan(g, p);
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
