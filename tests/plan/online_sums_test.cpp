// Online sums (plan/online_sums.hpp): which sums of exp(a - max) accumulate beside their
// max, and what that does to a column kernel's passes.
#include <gtest/gtest.h>

#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

// Softmax over axis 0 of x (f32 or bf16 graph), its sub and exp computed in `math`.
Graph column_softmax_in(DType x_type, DType math, bool same_axes = true) {
  Graph g;
  constexpr int64_t R = 4096, C = 1024;
  const ValueId in = build_input(g, "x", x_type, {R, C});
  const ValueId x = x_type == math ? in : build_cast(g, in, math);
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {0}, true), {R, C});
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, max));
  // A sum over the other axis is not the max's partner (and no column kernel holds both).
  const ValueId sum = same_axes
                          ? build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {0}, true), {R, C})
                          : build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), {R, C});
  build_output(g, "y", build_binary(g, OpKind::kDiv, e, sum));
  return g;
}

const KernelSpec* column_kernel(const FusionPlan& p) {
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.schedule == ScheduleKind::kColumnTile) return &k.spec;
  }
  return nullptr;
}

TEST(OnlineSums, AColumnSoftmaxSumsBesideItsMaxInTwoPasses) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Graph g = column_softmax_in(t, DType::kF32);
    const FusionPlan p = testing::plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const KernelSpec* s = column_kernel(p);
    ASSERT_NE(s, nullptr) << dump_plan(g, p);
    ASSERT_EQ(s->online_sums.size(), 1u) << dump_plan(g, p);
    const OnlineSum& o = s->online_sums[0];
    EXPECT_EQ(g.node(o.max).op, OpKind::kReduceMax);
    EXPECT_EQ(g.node(o.sum).op, OpKind::kReduceSum);
    EXPECT_EQ(g.node(o.max).operands[0], o.operand);
    // The sum takes its max's level: one reduction pass, then the store.
    EXPECT_EQ(s->level(o.sum), s->level(o.max));
    EXPECT_EQ(s->phases, 1);
    EXPECT_EQ(s->column.passes, 2);
    EXPECT_NE(dump_plan(g, p).find("online sum: %" + std::to_string(o.sum)), std::string::npos);
  }
}

// exp(a - max) rounded to bf16 before it is summed: the rescaled sum could not reproduce
// the rounding of each term, so the sum waits for the max.
TEST(OnlineSums, ASumOfRoundedTermsWaitsForItsMax) {
  const Graph g = column_softmax_in(DType::kBF16, DType::kBF16);
  const FusionPlan p = testing::plan(g);
  for (const PlannedKernel& k : p.kernels) EXPECT_TRUE(k.spec.online_sums.empty()) << dump_plan(g, p);
}

TEST(OnlineSums, OnlyASumOverTheMaxsAxesIsItsPartner) {
  const Graph g = column_softmax_in(DType::kF32, DType::kF32, false);
  const FusionPlan p = testing::plan(g);
  for (const PlannedKernel& k : p.kernels) EXPECT_TRUE(k.spec.online_sums.empty()) << dump_plan(g, p);
}

// Rows are whole in a block's registers or shared memory: their kernels keep the analyzed
// passes (online sums are the column tile's).
TEST(OnlineSums, RowSoftmaxKeepsItsPasses) {
  const Graph g =
      testing::column_pass_graph(testing::ColumnPassGraph::kSoftmax, DType::kF32, {1024, 4096}, {1});
  const FusionPlan p = testing::plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_TRUE(p.kernels[0].spec.online_sums.empty());
  EXPECT_EQ(p.kernels[0].spec.phases, 2);
}

}  // namespace
}  // namespace fstitch
