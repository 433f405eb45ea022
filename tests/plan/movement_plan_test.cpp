// The data-movement operations are index maps inside kernels: LLaMA's rotate-half and
// GPT-2's QKV split come out as one kernel at the memory lower bound, and every movement
// graph plans into a valid order under each policy.
#include <gtest/gtest.h>

#include <set>

#include "common/movement_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

TEST(MovementPlan, RotateHalfIsOneKernelAtTheLowerBound) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (int64_t cols : {64, 128, 7}) {
      const Graph g = testing::rotate_half(512, cols, t);
      for (int sm : {80, 90}) {
        const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
        ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
        EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
        EXPECT_EQ(p.workspace_bytes, 0u);
      }
    }
  }
}

TEST(MovementPlan, QkvSplitIsOneKernelAtTheLowerBound) {
  for (DType t : {DType::kF32, DType::kF16}) {
    const Graph g = testing::qkv_split(256, 768, t);
    for (int sm : {80, 90}) {
      const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
      ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
      EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
      EXPECT_EQ(p.kernels[0].spec.stored.size(), 3u);
    }
  }
}

// Data movement upstream of a reduction stays in the reduction's kernel: a concat of two
// feature blocks normalized over the last axis, and a padded row fed to a softmax.
TEST(MovementPlan, MovementFeedingARowReductionIsOneKernel) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {256, 384});
  ValueId b = build_input(g, "b", DType::kF32, {256, 128});
  ValueId x = build_concat(g, {a, b}, -1);
  ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {-1}, true);
  ValueId centered = build_binary(g, OpKind::kSub, x, mean);
  ValueId var =
      build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, centered, centered), {-1}, true);
  ValueId eps = build_constant_f64(g, DType::kF32, 1e-5);
  build_output(g, "y",
               build_binary(g, OpKind::kMul, centered,
                            build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps))));
  ValueId s = build_input(g, "s", DType::kF32, {64, 250});
  ValueId padded = build_pad_f64(g, s, {0, 0}, {0, 6}, -1e30);
  ValueId e = build_unary(
      g, OpKind::kExp,
      build_binary(g, OpKind::kSub, padded, build_reduce(g, OpKind::kReduceMax, padded, {-1}, true)));
  build_output(g, "p", build_binary(g, OpKind::kDiv, e, build_reduce(g, OpKind::kReduceSum, e, {-1}, true)));
  const FusionPlan p = plan(g, FusionPolicy::kStitch);
  ASSERT_EQ(fused_kernels(p).size(), 2u) << dump_plan(g, p);  // one per output: different domains
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
}

// An expensive value of fewer elements than the domain joins the kernel when it reaches the
// domain through a concat or a pad (each element computed once), not through a take.
TEST(MovementPlan, ExpensiveValuesFuseThroughConcatAndPadButNotTake) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {64, 32});
  ValueId b = build_input(g, "b", DType::kF32, {64, 32});
  ValueId tanh = build_unary(g, OpKind::kTanh, a);
  ValueId exp = build_unary(g, OpKind::kExp, b);
  build_output(g, "cat", build_concat(g, {tanh, b}, -1));
  build_output(g, "pad", build_pad_f64(g, exp, {0, 1}, {0, 1}, 0.0));
  const FusionPlan p = plan(g, FusionPolicy::kStitch);
  ASSERT_EQ(fused_kernels(p).size(), 2u) << dump_plan(g, p);  // the two outputs have different shapes
  for (const KernelSpec* k : fused_kernels(p)) EXPECT_EQ(k->members.size(), 2u) << dump_plan(g, p);

  Graph t;
  ValueId x = build_input(t, "x", DType::kF32, {8, 32});
  ValueId idx = build_input(t, "idx", DType::kI32, {64});
  build_output(t, "rows", build_take(t, build_unary(t, OpKind::kExp, x), idx, 0));
  const FusionPlan q = plan(t, FusionPolicy::kStitch);
  EXPECT_EQ(q.kernels.size(), 2u) << dump_plan(t, q);  // exp once per element of x, then the gather
}

TEST(MovementPlan, EveryMovementGraphPlansInAValidOrder) {
  for (const auto& m : testing::movement_graphs()) {
    const Graph g = m.build(64, 96, DType::kF32);
    for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
      SCOPED_TRACE(m.name + " " + fusion_policy_name(policy));
      const FusionPlan p = plan(g, policy);
      std::set<ValueId> available(g.inputs().begin(), g.inputs().end());
      for (const PlannedKernel& k : p.kernels) {
        for (ValueId v : k.spec.loaded)  // a free view is read in its root's buffer
          EXPECT_TRUE(available.count(storage_of(p, v))) << "%" << v << " used before it exists";
        for (ValueId v : k.spec.stored) available.insert(v);
      }
      for (const GraphOutput& o : g.outputs()) EXPECT_TRUE(available.count(storage_of(p, o.value))) << o.name;
    }
  }
}

}  // namespace
}  // namespace fstitch
