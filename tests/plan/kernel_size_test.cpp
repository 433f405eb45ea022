// Kernel size: no fixed operation limit. A long elementwise chain is one kernel; a kernel is
// bounded by resources (the code budget, the parameter space), and emission of a chain of
// any length does not recurse once per operation.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "ir/builder.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/kernel_spec.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

// y = ((x - 0.25) * 1.0001 - 0.25) * 1.0001 ... with `ops` operations.
Graph scaled_chain(int ops, const Dims& dims, DType dtype = DType::kF32) {
  Graph g;
  ValueId y = build_input(g, "x", dtype, dims);
  for (int i = 0; i < ops; ++i) {
    const ValueId c = build_broadcast(g, build_constant_f64(g, dtype, i % 2 ? 1.0001 : 0.25), dims);
    y = build_binary(g, i % 2 ? OpKind::kMul : OpKind::kSub, y, c);
  }
  build_output(g, "y", y);
  return g;
}

TEST(KernelSize, AFiveHundredOperationChainIsOneKernel) {
  const Graph g = scaled_chain(500, {256, 256});
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_EQ(p.kernels[0].spec.members.size(), 500u);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
  EXPECT_FALSE(emit_kernel(g, p.kernels[0]).empty());
}

// In bf16 every operation rounds its result. An add, subtract or multiply rounds with the
// conversion alone (fst_round_bf16_arith), and the broadcast constants it reads round
// nothing: 500 of them at 8 lanes a vector are one kernel within the code budget, where four
// instructions a rounding, charged to the constants too, split the chain into five kernels
// moving five times the bytes.
TEST(KernelSize, AFiveHundredOperationBf16ChainIsOneKernel) {
  const Graph g = scaled_chain(500, {4096, 4096}, DType::kBF16);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
  EXPECT_EQ(p.kernels[0].spec.vector_width, 8);
  EXPECT_LE(code_instructions(g, p.kernels[0].spec), 500.0 * 8 * 3);
}

// Eight thousand operations estimate past the code budget: the chain splits into kernels
// within it, few of them, and each boundary names the resource with its numbers. Emitting
// them (thousands of operations per kernel) must not exhaust the stack.
TEST(KernelSize, AChainPastTheCodeBudgetSplitsAndSaysWhy) {
  const Graph g = scaled_chain(8000, {64, 64});
  const FusionPlan p = plan(g);
  const PlanInputs defaults;
  double total_code = 0;
  for (const PlannedKernel& k : p.kernels) {
    const double code = code_instructions(g, k.spec);
    EXPECT_LE(code, defaults.code_budget) << k.name;
    total_code += code;
    EXPECT_FALSE(emit_kernel(g, k).empty());
  }
  ASSERT_GT(p.kernels.size(), 1u);
  // Not the 125 kernels of the search's 64-operation candidates: within twice the fewest
  // kernels the budget allows.
  EXPECT_LE(static_cast<double>(p.kernels.size()), 2 * (total_code / defaults.code_budget + 1))
      << dump_plan(g, p);
  for (const Boundary& b : p.boundaries) {
    EXPECT_EQ(b.cause, BoundaryCause::kResource) << b.reason;
    EXPECT_NE(b.reason.find("instructions of code, over the 16384"), std::string::npos) << b.reason;
  }
}

// One kernel of 30000 operations, past any budget, formed directly: emitting it requests
// each operand closure with an explicit stack, where a recursion per operation would need
// tens of megabytes of stack (a recursion of 8000 crashed).
TEST(KernelSize, EmittingAChainDoesNotRecursePerOperation) {
  const Graph g = scaled_chain(30000, {64, 64});
  PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, *arch_params(90));
  in.code_budget = std::numeric_limits<double>::infinity();
  std::vector<ValueId> members;
  for (size_t v = 0; v < g.size(); ++v) {
    if (is_fusable(in, static_cast<ValueId>(v))) members.push_back(static_cast<ValueId>(v));
  }
  ASSERT_EQ(members.size(), 30000u);
  PlannedKernel k;
  k.name = "fst_k0";
  Rejection why;
  ASSERT_TRUE(analyze_kernel(in, members, &k.spec, &why)) << why.reason;
  for (ValueId v : k.spec.loaded) k.params.push_back({ParamKind::kInput, 0, v, false});
  for (ValueId v : k.spec.stored) k.params.push_back({ParamKind::kOutput, 0, v, true});
  const std::string source = emit_kernel(g, k);
  // Every operation's value, in each of the four lanes.
  size_t defined = 0;
  for (size_t at = source.find("const float v"); at != std::string::npos;
       at = source.find("const float v", at + 1))
    ++defined;
  EXPECT_GE(defined, 4u * 30000u);
}

// The code estimate grows with the copies the emitter writes: a 16-bit chain's eight lanes
// per vector step cost twice the code of f32's four.
TEST(KernelSize, CodeGrowsWithTheLanesOfAVectorStep) {
  auto code_of = [](DType dtype) {
    Graph g;
    ValueId y = build_input(g, "x", dtype, {256, 256});
    for (int i = 0; i < 20; ++i) y = build_unary(g, OpKind::kNeg, y);
    build_output(g, "y", y);
    const FusionPlan p = plan(g);
    EXPECT_EQ(p.kernels.size(), 1u);
    return std::make_pair(code_instructions(g, p.kernels[0].spec), p.kernels[0].spec.vector_width);
  };
  const auto [f32, f32_lanes] = code_of(DType::kF32);
  const auto [f16, f16_lanes] = code_of(DType::kF16);
  EXPECT_EQ(f32_lanes, 4);
  EXPECT_EQ(f16_lanes, 8);
  EXPECT_GT(f16, 2 * f32 - 1e-9);
}

}  // namespace
}  // namespace fstitch
