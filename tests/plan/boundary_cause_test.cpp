// Why-not messages: every boundary between two kernels names one cause (BoundaryCause) and
// the numbers behind it, and the cause is the true one for graphs built to have it.
#include <gtest/gtest.h>

#include <string>

#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

// The boundaries of `p` with `cause`.
std::vector<Boundary> with_cause(const FusionPlan& p, BoundaryCause cause) {
  std::vector<Boundary> found;
  for (const Boundary& b : p.boundaries) {
    if (b.cause == cause) found.push_back(b);
  }
  return found;
}

// y = a + m(a) where m is an operation the caller runs: a's kernel feeds m, whose result
// the consumer needs, so joining a's kernel with the consumer would wait for itself.
TEST(BoundaryCause, APathThroughAnOpaqueOperationIsACycle) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF32, {64, 256});
  const ValueId max = build_reduce(g, OpKind::kReduceMax, x, {1}, true);
  const ValueId a =
      build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, build_broadcast(g, max, {64, 256})));
  const ValueId m = build_opaque(g, "matmul", {a}, DType::kF32, {64, 256});
  build_output(g, "y", build_binary(g, OpKind::kAdd, build_unary(g, OpKind::kSqrt, a), m));
  const FusionPlan p = plan(g);
  const std::vector<Boundary> cycles = with_cause(p, BoundaryCause::kCycle);
  ASSERT_FALSE(cycles.empty()) << dump_plan(g, p);
  for (const Boundary& b : cycles)
    EXPECT_NE(b.reason.find("through opaque operation %" + std::to_string(m)), std::string::npos) << b.reason;
}

// A bf16 Sinkhorn step of [4096, 1024]: a softmax over each row, then each column divided by
// its sum. The model scores the two kernels faster apart than one whose rows wait for the
// column sums at a grid barrier, and the reason gives both sides.
TEST(BoundaryCause, ACostDecisionShowsTheEstimates) {
  const Graph g = testing::sinkhorn_step(4096, 1024, DType::kBF16);
  const FusionPlan p = plan(g);
  for (const Boundary& b : p.boundaries) {
    if (b.cause != BoundaryCause::kCost) continue;
    EXPECT_NE(b.reason.find(" fused against "), std::string::npos) << b.reason;
    EXPECT_NE(b.reason.find(" apart"), std::string::npos) << b.reason;
  }
  EXPECT_FALSE(with_cause(p, BoundaryCause::kCost).empty()) << dump_plan(g, p);
}

// A sum of more inputs than one launch can take pointers for: the kernels split where the
// parameter space runs out, and each boundary says so with the byte counts.
TEST(BoundaryCause, TooManyInputsForOneLaunchIsAResourceLimit) {
  Graph g;
  ValueId y = build_input(g, "x0", DType::kF32, {32, 32});
  for (int i = 1; i < 700; ++i)
    y = build_binary(g, OpKind::kAdd, y, build_input(g, "x" + std::to_string(i), DType::kF32, {32, 32}));
  build_output(g, "y", y);
  const FusionPlan p = plan(g);
  ASSERT_GT(p.kernels.size(), 1u);
  const std::vector<Boundary> limits = with_cause(p, BoundaryCause::kResource);
  ASSERT_FALSE(limits.empty()) << dump_plan(g, p);
  for (const Boundary& b : limits)
    EXPECT_NE(b.reason.find("bytes of kernel parameters, over the 4096"), std::string::npos) << b.reason;
  for (const PlannedKernel& k : p.kernels) EXPECT_LE(k.params.size() * sizeof(void*), 4096u);
}

// Row statistics and a middle-axis sum of the same product: a reduction over neither the
// rows' axes nor all the others (a column total) cannot share the row kernel, and the reason
// says so.
TEST(BoundaryCause, ReductionsOverDifferentAxesCannotFuse) {
  Graph g;
  const Dims dims = {8, 64, 256};
  const ValueId x = build_input(g, "x", DType::kF32, dims);
  const ValueId dy = build_input(g, "dy", DType::kF32, dims);
  const ValueId centered = build_binary(
      g, OpKind::kSub, x, build_broadcast(g, build_reduce(g, OpKind::kReduceMean, x, {2}, true), dims));
  build_output(g, "dw",
               build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, dy, centered), {1}, false));
  build_output(g, "dx", build_binary(g, OpKind::kMul, dy, centered));
  const FusionPlan p = plan(g);
  const std::vector<Boundary> refused = with_cause(p, BoundaryCause::kCannotFuse);
  ASSERT_FALSE(refused.empty()) << dump_plan(g, p);
  for (const Boundary& b : refused) EXPECT_EQ(b.reason.rfind("cannot fuse: ", 0), 0u) << b.reason;
}

TEST(BoundaryCause, PolicyNoneIsThePolicy) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF32, {16, 16});
  build_output(g, "y", build_unary(g, OpKind::kExp, build_unary(g, OpKind::kNeg, x)));
  const FusionPlan p = plan(g, FusionPolicy::kNone);
  ASSERT_FALSE(p.boundaries.empty());
  for (const Boundary& b : p.boundaries) EXPECT_EQ(b.cause, BoundaryCause::kPolicy);
}

// Whatever the graph, a boundary's words start with its cause's name.
TEST(BoundaryCause, TheReasonStartsWithTheCause) {
  EXPECT_STREQ(boundary_cause_name(BoundaryCause::kCycle), "cycle");
  Graph g;
  const Dims dims = {4096, 512};
  const ValueId x = build_input(g, "x", DType::kF32, dims);
  const ValueId s = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
  const ValueId m = build_opaque(g, "scale", {s}, DType::kF32, {1, 512});
  build_output(g, "y",
               build_binary(g, OpKind::kMul, build_broadcast(g, m, dims),
                            build_binary(g, OpKind::kAdd, x, build_broadcast(g, s, dims))));
  size_t boundaries = 0;
  for (FusionPolicy policy : testing::kPolicies) {
    const FusionPlan p = plan(g, policy);
    boundaries += p.boundaries.size();
    for (const Boundary& b : p.boundaries) {
      const std::string name = boundary_cause_name(b.cause);
      const std::string head = b.cause == BoundaryCause::kPolicy ? "policy" : name;
      EXPECT_EQ(b.reason.rfind(head == "cost" ? "cost model" : head, 0), 0u) << b.reason;
    }
  }
  EXPECT_GE(boundaries, 3u);
}

}  // namespace
}  // namespace fstitch
