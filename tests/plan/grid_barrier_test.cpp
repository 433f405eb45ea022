// Kernels whose rows wait at a grid barrier for their column totals, then walk their rows
// again (RowStages::kRowsAfterTotals): which graphs become one, what crosses the barrier and
// how, and where the model keeps the two halves apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/kernel_spec.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;
using testing::sinkhorn_step;
using testing::SinkhornForm;

// A Sinkhorn step over [4096, 1024] (the rows of a 4096-token attention map) is one kernel on
// an H100: the softmax rows stay in shared memory across the barrier (16 MB over the SMs),
// so x is read once and z written once; beyond the lower bound only the column totals'
// partials move, and each block reads the totals once.
TEST(GridBarrier, SinkhornStepIsOneKernelThatReadsItsInputOnce) {
  for (const Dims& dims : {Dims{4096, 1024}, Dims{8192, 768}}) {
    const Graph g = sinkhorn_step(dims[0], dims[1], DType::kF32);
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const PlannedKernel& k = p.kernels[0];
    const KernelSpec& s = k.spec;
    EXPECT_EQ(s.stages, RowStages::kRowsAfterTotals);
    EXPECT_EQ(s.crossing, BarrierCrossing::kSharedRows) << dump_plan(g, p);
    EXPECT_EQ(k.launch, LaunchKind::kCooperative);
    // Every block resident at once, each keeping all the rows it walks.
    EXPECT_LE(s.grid_blocks, int64_t{s.planned_blocks_per_sm} * p.arch.sm_count);
    const int64_t rows_per_block = s.block_threads / s.threads_per_row;
    EXPECT_GE(s.grid_blocks * s.kept_rows, s.rows);
    EXPECT_EQ(s.kept_rows % rows_per_block, 0);
    EXPECT_LE(s.dynamic_shared_bytes, static_cast<size_t>(p.arch.max_shared_bytes_per_block));
    const uint64_t totals_reads = uint64_t{4} * static_cast<uint64_t>(s.cols * s.grid_blocks);
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes + 2 * s.column_total_traffic_bytes + totals_reads)
        << dump_plan(g, p);
    EXPECT_LE(p.planned_bytes, p.lower_bound_bytes * 5 / 4) << dump_plan(g, p);
    const std::string dump = dump_plan(g, p);
    EXPECT_NE(dump.find("stages: rows, grid barrier, rows again"), std::string::npos) << dump;
    EXPECT_NE(dump.find("it kept in shared memory"), std::string::npos) << dump;
    // The totals cross through global memory, the kept softmax through shared memory.
    const ValueId total = s.column_totals[0];
    EXPECT_NE(dump.find("stitch %" + std::to_string(total) + ":global"), std::string::npos) << dump;
    EXPECT_NE(dump.find("stitch %" + std::to_string(s.crossing_values[0]) + ":regional"), std::string::npos)
        << dump;
    EXPECT_EQ(dump, dump_plan(g, plan(g)));  // deterministic
  }
}

// Where the rows and the totals are faster apart (a small map, whose column tile costs less
// than the grid barrier and the totals' combine; a bf16 map, whose half-size traffic the
// model finds cheaper than the joined kernel's barriers), the planner splits the joined
// kernel at its barrier, and the boundary between the two gives the model's numbers.
TEST(GridBarrier, TheModelKeepsTheHalvesApartWhereThatIsFaster) {
  for (const auto& [dims, dtype] :
       {std::pair<Dims, DType>{{1024, 1024}, DType::kF32}, {{4096, 1024}, DType::kBF16}}) {
    const Graph g = sinkhorn_step(dims[0], dims[1], dtype);
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
    for (const PlannedKernel& k : p.kernels) EXPECT_EQ(k.spec.stages, RowStages::kOne) << dump_plan(g, p);
    ASSERT_FALSE(p.boundaries.empty()) << dump_plan(g, p);
    for (const Boundary& b : p.boundaries) EXPECT_EQ(b.cause, BoundaryCause::kCost) << b.reason;
    // And the joined kernel is what the model scores slower.
    const PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, p.arch);
    std::vector<ValueId> all;
    for (const PlannedKernel& k : p.kernels)
      all.insert(all.end(), k.spec.members.begin(), k.spec.members.end());
    KernelSpec joined;
    ASSERT_TRUE(analyze_kernel(in, all, &joined, nullptr));
    EXPECT_EQ(joined.stages, RowStages::kRowsAfterTotals);
    EXPECT_GT(joined.est_seconds, p.kernels[0].spec.est_seconds + p.kernels[1].spec.est_seconds);
    EXPECT_NE(dump_plan(g, p).find("separate kernels estimated faster"), std::string::npos)
        << dump_plan(g, p);
  }
}

// A kernel whose column totals one other kernel reads gives them to it where the model
// scores that faster: a bf16 Sinkhorn step at [1024, 1024] is a row kernel that stores the
// softmax and a column kernel that sums and divides it, not a row kernel with the sums and
// an elementwise division (16.6 us against 12.2 us estimated).
TEST(GridBarrier, TheTotalsGoToTheKernelThatReadsThem) {
  const Graph g = sinkhorn_step(1024, 1024, DType::kBF16);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  ValueId total = -1, z = -1;
  for (ValueId v = 0; v < static_cast<ValueId>(g.size()); ++v) {
    if (g.node(v).op == OpKind::kReduceSum && g.node(v).axes == std::vector<int64_t>{0}) total = v;
    if (g.node(v).op == OpKind::kDiv && !g.node(v).operands.empty() &&
        g.node(g.node(v).operands[1]).op == OpKind::kBroadcast &&
        g.node(g.node(v).operands[1]).operands[0] == total)
      z = v;
  }
  ASSERT_GE(total, 0);
  ASSERT_GE(z, 0);
  const KernelSpec& rows = p.kernels[0].spec;
  const KernelSpec& columns = p.kernels[1].spec;
  EXPECT_TRUE(rows.column_totals.empty()) << dump_plan(g, p);
  EXPECT_TRUE(columns.is_member(total) && columns.is_member(z)) << dump_plan(g, p);
  // The other partition, scored by the same model, is slower.
  const PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, p.arch);
  std::vector<ValueId> with_totals = rows.members, division;
  for (ValueId v : columns.members) (v == total ? with_totals : division).push_back(v);
  std::sort(with_totals.begin(), with_totals.end());
  KernelSpec a, b;
  ASSERT_TRUE(analyze_kernel(in, with_totals, &a, nullptr));
  ASSERT_TRUE(analyze_kernel(in, division, &b, nullptr));
  EXPECT_LT(rows.est_seconds + columns.est_seconds, a.est_seconds + b.est_seconds);
}

// Every operation of g but its inputs: the members of one kernel holding the whole graph.
std::vector<ValueId> every_operation(const Graph& g) {
  std::vector<ValueId> members;
  for (ValueId v = 0; v < static_cast<ValueId>(g.size()); ++v) {
    if (g.node(v).op != OpKind::kInput) members.push_back(v);
  }
  return members;
}

// analyze_kernel of every operation of `g` as one kernel for an H100.
bool analyze_whole_graph(const Graph& g, KernelSpec* spec, Rejection* why) {
  const PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, *arch_params(90));
  return analyze_kernel(in, every_operation(g), spec, why);
}

// A value of the totals' own shape computed from them (1 / s here; s + eps, |s| in other
// graphs) is computed after the barrier at each element's column: the kernel is the same one
// kernel.
TEST(GridBarrier, ValuesOfTheTotalsShapeAreComputedAtEachColumn) {
  const Graph g = sinkhorn_step(4096, 1024, DType::kF32, SinkhornForm::kReciprocal);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const KernelSpec& s = p.kernels[0].spec;
  EXPECT_EQ(s.stages, RowStages::kRowsAfterTotals);
  const auto totals_shaped = std::count_if(s.members.begin(), s.members.end(), [&](ValueId v) {
    return s.role(v) == ValueRole::kIndexed && s.after_column_totals(v) && g.node(v).op == OpKind::kDiv;
  });
  EXPECT_EQ(totals_shaped, 1) << dump_plan(g, p);
}

// An input a value after the barrier reads itself (z = y / s + x) is read a second time, in
// the second walk, even where the softmax rows are kept: the planned bytes count it.
TEST(GridBarrier, InputsReadAfterTheBarrierAreCountedAgain) {
  const Graph g = sinkhorn_step(4096, 1024, DType::kF32, SinkhornForm::kPlusInput);
  KernelSpec spec;
  ASSERT_TRUE(analyze_whole_graph(g, &spec, nullptr));
  ASSERT_EQ(spec.stages, RowStages::kRowsAfterTotals);
  ASSERT_EQ(spec.crossing, BarrierCrossing::kSharedRows);
  const uint64_t input = 4096 * 1024 * 4;
  const uint64_t totals_reads = uint64_t{4} * 1024 * static_cast<uint64_t>(spec.grid_blocks);
  EXPECT_EQ(spec.bytes_read, 2 * input + spec.column_total_traffic_bytes + totals_reads);
}

// After the barrier a kernel computes element values and row reductions of them in a second
// walk with passes of its own, over the rows it reads again or the rows it kept: a full
// Sinkhorn iteration, z = y / s then z / sum(z, axis 1), is one kernel that reads x once. A
// column total of what reads the totals accumulates in the walk after the barrier.
TEST(GridBarrier, RowReductionsAfterTheTotalsHavePassesOfTheirOwn) {
  {
    Graph g;
    const Dims dims = {256, 128};
    const ValueId x = build_input(g, "x", DType::kF32, dims);
    const ValueId total = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
    const ValueId scaled = build_binary(g, OpKind::kDiv, x, build_broadcast(g, total, dims));
    const ValueId row_max = build_reduce(g, OpKind::kReduceMax, scaled, {1}, true);
    build_output(g, "y", build_binary(g, OpKind::kSub, scaled, build_broadcast(g, row_max, dims)));
    KernelSpec spec;
    Rejection why;
    ASSERT_TRUE(analyze_whole_graph(g, &spec, &why)) << why.reason;
    EXPECT_EQ(spec.stages, RowStages::kRowsAfterTotals);
    EXPECT_EQ(spec.crossing, BarrierCrossing::kReadAgain);
    EXPECT_TRUE(spec.after_column_totals(row_max));
    EXPECT_EQ(spec.level(row_max), spec.phases);
  }
  {
    Graph g;
    const Dims dims = {256, 128};
    const ValueId x = build_input(g, "x", DType::kF32, dims);
    const ValueId row_max = build_reduce(g, OpKind::kReduceMax, x, {1}, true);
    const ValueId centered = build_binary(g, OpKind::kSub, x, build_broadcast(g, row_max, dims));
    const ValueId total = build_reduce(g, OpKind::kReduceSum, centered, {0}, true);
    const ValueId scaled = build_binary(g, OpKind::kDiv, centered, build_broadcast(g, total, dims));
    const ValueId sums = build_reduce(g, OpKind::kReduceSum, scaled, {0}, true);
    build_output(g, "sums", sums);
    KernelSpec spec;
    Rejection why;
    ASSERT_TRUE(analyze_whole_graph(g, &spec, &why)) << why.reason;
    EXPECT_EQ(spec.row_walks, 2);
    EXPECT_EQ(spec.walk_of(total), 0);
    EXPECT_EQ(spec.walk_of(sums), 1);
    EXPECT_TRUE(spec.is_column_total(sums));
    // Nothing reads the second walk's totals: no barrier after it.
    EXPECT_TRUE(spec.releases_grid_after(0));
    EXPECT_FALSE(spec.releases_grid_after(1));
  }
  const Graph g = sinkhorn_step(4096, 1024, DType::kF32, SinkhornForm::kRowsNormalizedAgain);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const KernelSpec& s = p.kernels[0].spec;
  EXPECT_EQ(s.stages, RowStages::kRowsAfterTotals);
  EXPECT_EQ(s.crossing, BarrierCrossing::kSharedRows);
  // x read once, w written once; beyond that only the partials and the totals' reads.
  const uint64_t totals_reads = 1024ull * 4 * static_cast<uint64_t>(s.grid_blocks);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes + 2 * s.column_total_traffic_bytes + totals_reads)
      << dump_plan(g, p);
  EXPECT_NE(dump_plan(g, p).find("in passes of its own"), std::string::npos);
}

// Sinkhorn iterations one after the other: each column normalization waits at a grid
// barrier of its own, one kernel of three walks for two iterations over [4096, 1024] f32 on
// an H100. The softmax rows kept for the second walk and the rows it keeps for the third
// share one buffer (the second walk reads each element of the first before it writes its
// own), so each block keeps its 8 rows once; x is read once and z written once, beyond that
// only the partials and each block's reads of the two totals.
TEST(GridBarrier, SinkhornIterationsWaitAtABarrierEach) {
  const Graph g = testing::sinkhorn_iterations(4096, 1024, DType::kF32, 2);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const KernelSpec& s = p.kernels[0].spec;
  EXPECT_EQ(s.stages, RowStages::kRowsAfterTotals);
  EXPECT_EQ(s.row_walks, 3);
  EXPECT_EQ(p.kernels[0].launch, LaunchKind::kCooperative);
  ASSERT_EQ(s.crossing, BarrierCrossing::kSharedRows) << dump_plan(g, p);
  ASSERT_EQ(s.column_totals.size(), 2u);
  EXPECT_EQ(s.walk_of(s.column_totals[0]), 0);
  EXPECT_EQ(s.walk_of(s.column_totals[1]), 1);
  ASSERT_EQ(s.crossing_values.size(), 2u);
  EXPECT_EQ(s.kept_buffer_slot_bytes, std::vector<int>{4});
  EXPECT_EQ(s.dynamic_shared_bytes, static_cast<size_t>(s.kept_rows * s.cols * 4));
  const uint64_t totals_reads = 2 * 1024ull * 4 * static_cast<uint64_t>(s.grid_blocks);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes + 2 * s.column_total_traffic_bytes + totals_reads)
      << dump_plan(g, p);
  const std::string dump = dump_plan(g, p);
  EXPECT_NE(dump.find("(3 walks, 2 grid barriers)"), std::string::npos) << dump;
  EXPECT_EQ(dump, dump_plan(g, plan(g)));  // deterministic
}

// The values that cross the barrier are what the second walk reads from the first: the
// softmax rows, not the input, when z = y / s; nothing, when z = x / s reads the input
// itself (then the rows are read again).
TEST(GridBarrier, CrossingValuesAreWhatTheSecondWalkReads) {
  const ArchParams arch = *arch_params(90);
  for (SinkhornForm form : {SinkhornForm::kScaled, SinkhornForm::kInputScaled}) {
    const Graph g = sinkhorn_step(512, 256, DType::kF32, form);
    const PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, arch);
    const std::vector<ValueId> members = every_operation(g);
    KernelSpec spec;
    Rejection why;
    ASSERT_TRUE(analyze_kernel(in, members, &spec, &why)) << why.reason;
    ASSERT_EQ(spec.stages, RowStages::kRowsAfterTotals);
    ASSERT_EQ(spec.column_totals.size(), 1u);
    if (form == SinkhornForm::kScaled) {
      // y = e / sum(e), the operand of the column total.
      ASSERT_EQ(spec.crossing_values.size(), 1u);
      EXPECT_EQ(spec.crossing_values[0], g.node(spec.column_totals[0]).operands[0]);
    } else {
      EXPECT_TRUE(spec.crossing_values.empty());
      EXPECT_EQ(spec.crossing, BarrierCrossing::kReadAgain);
    }
  }
}

}  // namespace
}  // namespace fstitch
