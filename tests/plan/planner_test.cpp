// The planner: canonical graphs become single kernels at the memory lower bound under
// stitch, loop and none behave as documented, and plans are always acyclic DAGs.
#include <gtest/gtest.h>

#include <set>

#include "common/canonical_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/explore.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

struct Shape {
  int64_t rows, cols;
};
const Shape kShapes[] = {{64, 256}, {8, 4096}, {1000, 30}, {512, 1024}, {3, 7}};
const DType kDTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

using testing::plan;

size_t op_count(const Graph& g) {
  PlanInputs in = make_plan_inputs(g, FusionPolicy::kNone, *arch_params(90));
  size_t n = 0;
  for (size_t i = 0; i < g.size(); ++i) n += is_fusable(in, static_cast<ValueId>(i)) ? 1 : 0;
  return n;
}

// Every value a kernel loads is a graph input or stored by an earlier kernel.
void expect_valid_order(const Graph& g, const FusionPlan& p) {
  std::set<ValueId> available(g.inputs().begin(), g.inputs().end());
  for (const PlannedKernel& k : p.kernels) {
    for (ValueId v : k.spec.loaded) EXPECT_TRUE(available.count(v)) << "%" << v << " used before it exists";
    for (ValueId v : k.spec.stored) available.insert(v);
  }
  for (const GraphOutput& o : g.outputs())
    EXPECT_TRUE(available.count(o.value)) << o.name << " never written";
}

TEST(Planner, CanonicalGraphsAreOneKernelAtTheLowerBound) {
  for (const auto& c : testing::canonical_graphs()) {
    for (Shape s : kShapes) {
      for (DType t : kDTypes) {
        SCOPED_TRACE(c.name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
                     dtype_name(t));
        Graph g = c.build(s.rows, s.cols, t);
        for (int sm : {80, 90}) {
          FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
          ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
          EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
          EXPECT_EQ(p.workspace_bytes, 0u);
          expect_valid_order(g, p);
        }
      }
    }
  }
}

TEST(Planner, LoopFusionEndsKernelsAtReductions) {
  for (const auto& c : testing::canonical_graphs()) {
    Graph g = c.build(64, 256, DType::kF32);
    FusionPlan stitch = plan(g, FusionPolicy::kStitch);
    FusionPlan loop = plan(g, FusionPolicy::kLoop);
    expect_valid_order(g, loop);
    bool has_reduction = false;
    for (const Node& n : g.nodes()) has_reduction = has_reduction || op_family(n.op) == OpFamily::kReduce;
    if (has_reduction) {
      EXPECT_GT(loop.kernels.size(), stitch.kernels.size()) << c.name;
      EXPECT_GT(loop.planned_bytes, stitch.planned_bytes) << c.name;
    } else {
      EXPECT_EQ(loop.kernels.size(), 1u) << c.name;
    }
    for (const PlannedKernel& k : loop.kernels) {
      // No reduction result is consumed inside its own kernel.
      std::set<ValueId> members(k.spec.members.begin(), k.spec.members.end());
      for (ValueId v : k.spec.members) {
        for (ValueId o : g.node(v).operands) {
          if (members.count(o)) {
            EXPECT_NE(op_family(g.node(o).op), OpFamily::kReduce) << c.name;
          }
        }
      }
    }
  }
}

TEST(Planner, NoneGivesOneKernelPerOperation) {
  for (const auto& c : testing::canonical_graphs()) {
    for (DType t : kDTypes) {
      Graph g = c.build(64, 256, t);
      FusionPlan p = plan(g, FusionPolicy::kNone);
      EXPECT_EQ(p.kernels.size(), op_count(g)) << c.name;
      for (const PlannedKernel& k : p.kernels) EXPECT_EQ(k.spec.members.size(), 1u);
      expect_valid_order(g, p);
      for (const Boundary& b : p.boundaries) EXPECT_FALSE(b.reason.empty());
    }
  }
}

TEST(Planner, ExpensiveOpsAreNotRecomputedAcrossABroadcast) {
  // exp(bias) broadcast over 64 rows: recomputing it per element would repeat it 64 times.
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {64, 256});
  ValueId bias = build_input(g, "bias", DType::kF32, {256});
  ValueId e = build_unary(g, OpKind::kExp, bias);
  build_output(g, "y", build_binary(g, OpKind::kAdd, x, e));
  FusionPlan p = plan(g, FusionPolicy::kStitch);
  ASSERT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  EXPECT_EQ(p.kernels[0].spec.members, std::vector<ValueId>{e});

  // A row value computed once per row may be expensive: it stays in the kernel.
  Graph h;
  ValueId hx = build_input(h, "x", DType::kF32, {64, 256});
  ValueId r = build_unary(h, OpKind::kExp, build_reduce(h, OpKind::kReduceMax, hx, {1}, true));
  build_output(h, "y", build_binary(h, OpKind::kMul, hx, r));
  EXPECT_EQ(plan(h, FusionPolicy::kStitch).kernels.size(), 1u);
}

TEST(Planner, StitchSchemesFollowTheSchedule) {
  // Whatever mapping the cost model picks, a row value crosses threads the way it implies:
  // warp shuffles within a (sub-)warp, shared memory across the warps of a block.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 256}, {16, 8192}, {4096, 8}, {65536, 1024}}) {
    Graph g = testing::softmax_scale_mask(rows, cols, DType::kF32);
    FusionPlan p = plan(g, FusionPolicy::kStitch);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const KernelSpec& s = p.kernels[0].spec;
    const std::string dump = dump_plan(g, p);
    if (s.schedule == ScheduleKind::kSplitRow) {
      // Across the blocks of a group: a cluster's shared memory, or global memory.
      EXPECT_NE(dump.find(s.split.residency == GroupResidency::kCluster ? ":cluster" : ":global"),
                std::string::npos)
          << dump;
    } else if (s.threads_per_row > 32) {
      EXPECT_EQ(s.schedule, ScheduleKind::kBlockPerRow) << dump;
      EXPECT_NE(dump.find(":regional"), std::string::npos) << dump;
    } else {
      EXPECT_TRUE(s.schedule == ScheduleKind::kWarpPerRow || s.schedule == ScheduleKind::kSubWarpPerRow)
          << dump;
      EXPECT_NE(dump.find(":warp"), std::string::npos) << dump;
    }
    EXPECT_LE(s.threads_per_row, std::max<int64_t>(2, 2 * cols))
        << "more threads per row than elements: " << dump;
  }
}

TEST(Planner, ColumnReductionsGetColumnSchedules) {
  Graph g;
  // Many columns (rows of the kernel), few reduced elements each: threads run along the kept
  // axis, so every pass over the input is coalesced.
  ValueId x = build_input(g, "x", DType::kF32, {16, 16384});
  ValueId s = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
  build_output(g, "y", build_binary(g, OpKind::kDiv, x, s));
  FusionPlan p = plan(g, FusionPolicy::kStitch);
  bool reduces = false;
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.reduced_axes.empty()) continue;
    reduces = true;
    EXPECT_FALSE(k.spec.contiguous_rows);
    EXPECT_TRUE(k.spec.schedule == ScheduleKind::kThreadPerRow ||
                k.spec.schedule == ScheduleKind::kColumnTile)
        << dump_plan(g, p);
  }
  EXPECT_TRUE(reduces);
}

TEST(Planner, OutputsThatAreInputsOrConstantsAreCopied) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF16, {5});
  build_output(g, "x_again", x);
  build_output(g, "x_twice", x);
  build_output(g, "c", build_constant_f64(g, DType::kF32, 2.5));
  FusionPlan p = plan(g, FusionPolicy::kStitch);
  ASSERT_EQ(fused_kernels(p).size(), 2u);
  size_t writes = 0;
  for (const PlannedKernel& k : p.kernels) {
    for (const KernelParam& prm : k.params) writes += prm.written ? 1 : 0;
  }
  EXPECT_EQ(writes, 3u);
}

TEST(Planner, OpaqueOperationsGetWorkspaceAndBoundaries) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {8, 16});
  ValueId b = build_input(g, "b", DType::kF32, {16, 4});
  ValueId m = build_opaque(g, "matmul", {build_unary(g, OpKind::kRelu, a), b}, DType::kF32, {8, 4});
  build_output(g, "y", build_unary(g, OpKind::kExp, m));
  FusionPlan p = plan(g, FusionPolicy::kStitch);
  ASSERT_EQ(p.opaque_ops, std::vector<ValueId>{m});
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_TRUE(p.opaque_result_offsets.count(m));
  EXPECT_GE(p.workspace_bytes, 2 * 8 * 16 * 4u / 2);
  EXPECT_NE(dump_plan(g, p).find("run by the caller"), std::string::npos);
}

TEST(Planner, UnknownArchitectureIsUnsupported) {
  Graph g = testing::gelu_bias(4, 4, DType::kF32);
  FusionOptions o;
  o.target_sm = 75;
  EXPECT_THROW(plan_fusion(g, o), Error);
}

// Random DAGs of elementwise ops, broadcasts and reductions: plans are always valid orders.
TEST(Planner, RandomGraphsNeverProduceCycles) {
  uint64_t state = 0x243F6A8885A308D3ull;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  const OpKind unary[] = {OpKind::kNeg, OpKind::kExp, OpKind::kTanh, OpKind::kRelu};
  const OpKind binary[] = {OpKind::kAdd, OpKind::kMul, OpKind::kMax, OpKind::kSub};
  for (int trial = 0; trial < 200; ++trial) {
    Graph g;
    const int64_t R = 1 + static_cast<int64_t>(next(40)), C = 1 + static_cast<int64_t>(next(300));
    std::vector<ValueId> full = {build_input(g, "x", DType::kF32, {R, C}),
                                 build_input(g, "y", DType::kF32, {R, C})};
    std::vector<ValueId> rows;
    const int ops = 5 + static_cast<int>(next(40));
    for (int i = 0; i < ops; ++i) {
      switch (next(4)) {
        case 0:
          full.push_back(build_unary(g, unary[next(4)], full[next(full.size())]));
          break;
        case 1: {
          ValueId a = full[next(full.size())];
          ValueId b = !rows.empty() && next(2) ? rows[next(rows.size())] : full[next(full.size())];
          full.push_back(build_binary(g, binary[next(4)], a, b));
          break;
        }
        case 2:
          rows.push_back(build_reduce(g, next(2) ? OpKind::kReduceSum : OpKind::kReduceMax,
                                      full[next(full.size())], {next(3) ? 1 : 0}, true));
          break;
        default:
          if (!rows.empty()) {
            full.push_back(build_binary(g, OpKind::kMul, full[next(full.size())], rows[next(rows.size())]));
          }
      }
    }
    build_output(g, "out0", full.back());
    if (!rows.empty()) build_output(g, "out1", rows.back());
    for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
      FusionPlan p;
      ASSERT_NO_THROW(p = plan(g, policy)) << "trial " << trial;
      expect_valid_order(g, p);
      std::set<ValueId> seen;
      for (const PlannedKernel& k : p.kernels) {
        for (ValueId v : k.spec.members) EXPECT_TRUE(seen.insert(v).second) << "%" << v << " in two kernels";
      }
    }
  }
}

}  // namespace
}  // namespace fstitch
