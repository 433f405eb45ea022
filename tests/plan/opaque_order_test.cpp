// Plans around opaque operations are executable: no kernel both produces what an opaque
// operation reads and consumes its result, and the launch order lets every opaque operation
// run between kernels once what it reads exists.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "codegen/emit.hpp"
#include "ir/text.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::kPolicies;
using testing::plan;

// Runs the plan's steps symbolically: every step reads only values an earlier step (or the
// caller, for graph inputs) wrote, at the location it reads them from (a free view is read in
// its root's buffer); every kernel and opaque operation runs once; every output is written.
void expect_executable(const Graph& g, const FusionPlan& p) {
  std::set<std::tuple<ValueId, ParamKind, size_t>> written;  // value, location kind, index
  for (size_t i = 0; i < g.inputs().size(); ++i) written.insert({g.inputs()[i], ParamKind::kInput, i});
  auto exists = [&](ValueId v, ParamKind kind, size_t index) {
    return written.count({storage_of(p, v), kind, index}) != 0;
  };
  std::set<size_t> kernels_run, opaque_run;
  ASSERT_EQ(p.steps.size(), p.kernels.size() + p.opaque_ops.size());
  ASSERT_EQ(p.opaque_steps.size(), p.opaque_ops.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep& step = p.steps[i];
    if (step.kind == StepKind::kKernel) {
      ASSERT_LT(step.index, p.kernels.size());
      EXPECT_TRUE(kernels_run.insert(step.index).second) << "kernel " << step.index << " runs twice";
      for (const KernelParam& param : p.kernels[step.index].params) {
        if (!param.written) {
          EXPECT_TRUE(exists(param.value, param.kind, param.index))
              << "step " << i << " (kernel " << step.index << ") reads %" << param.value
              << " before it exists";
        }
      }
      for (const KernelParam& param : p.kernels[step.index].params) {
        if (param.written) written.insert({param.stored_value(), param.kind, param.index});
      }
      continue;
    }
    ASSERT_LT(step.index, p.opaque_steps.size());
    EXPECT_TRUE(opaque_run.insert(step.index).second) << "opaque operation " << step.index << " runs twice";
    const OpaqueStep& o = p.opaque_steps[step.index];
    EXPECT_EQ(o.op, p.opaque_ops[step.index]);
    const Node& n = g.node(o.op);
    ASSERT_EQ(o.operands.size(), n.operands.size());
    for (size_t k = 0; k < n.operands.size(); ++k) {
      EXPECT_TRUE(exists(n.operands[k], o.operands[k].kind, o.operands[k].index))
          << "step " << i << " (opaque %" << o.op << ") reads %" << n.operands[k] << " before it exists";
    }
    written.insert({o.op, o.result.kind, o.result.index});
  }
  EXPECT_EQ(kernels_run.size(), p.kernels.size());
  EXPECT_EQ(opaque_run.size(), p.opaque_ops.size());
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    EXPECT_TRUE(exists(g.outputs()[j].value, ParamKind::kOutput, j)) << "output " << g.outputs()[j].name;
  }
}

// y = a + opaque(a): the kernel that stores a cannot also read opaque(a).
TEST(OpaqueOrder, APathThroughAnOpaqueOperationIsADependency) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = constant 2 : f32
%2 = broadcast %1 : f32[4,8]
%3 = mul %0, %2 : f32[4,8]
%4 = opaque "slice" (%3) : f32[4,8]
%5 = add %3, %4 : f32[4,8]
output "y" = %5
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    for (const PlannedKernel& k : p.kernels) EXPECT_FALSE(k.spec.is_member(3) && k.spec.is_member(5));
    expect_executable(g, p);
    // The regions read x and opaque(a) and write a and y, 128 bytes each, whatever the plan.
    EXPECT_EQ(p.lower_bound_bytes, 4u * 128u);
    EXPECT_GE(p.planned_bytes, p.lower_bound_bytes);
  }
}

// The lower bound counts what the fused regions around opaque operations must move: an
// input only an opaque operation reads and an output an opaque operation writes cost the
// regions nothing; an operand computed by a region is written once.
TEST(OpaqueOrder, TheLowerBoundCountsEachRegionsInputsAndOutputsOnce) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = input "w" : f32[8,8]
%2 = opaque "mm" (%0, %1) : f32[4,8]
%3 = exp %2 : f32[4,8]
%4 = opaque "mm2" (%3, %1) : f32[4,8]
output "y" = %4
output "e" = %3
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    expect_executable(g, p);
    // Read mm's result, write exp's (an output, also mm2's operand) once: 2 x 128 bytes.
    EXPECT_EQ(p.lower_bound_bytes, 2u * 128u);
    EXPECT_GE(p.planned_bytes, p.lower_bound_bytes);
  }
}

// z = exp(x) * mm(reshape(x * 2)): the kernel reading mm's result comes after the one that
// stores mm's operand, whatever order the kernels' first members suggest.
TEST(OpaqueOrder, KernelsReadingAnOpaqueResultLaunchAfterItsOperandsProducers) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
%2 = constant 2 : f32
%3 = broadcast %2 : f32[4,8]
%4 = mul %0, %3 : f32[4,8]
%5 = reshape %4 : f32[8,4]
%6 = opaque "mm" (%5) : f32[4,8]
%7 = mul %1, %6 : f32[4,8]
output "z" = %7
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    expect_executable(g, plan(g, policy));
  }
}

// Chains of opaque operations, and a kernel that feeds two of them.
TEST(OpaqueOrder, ChainsOfOpaqueOperationsOrderTheKernelsAroundThem) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = tanh %0 : f32[4,8]
%2 = neg %0 : f32[4,8]
%3 = opaque "first" (%2) : f32[4,8]
%4 = opaque "second" (%3, %1) : f32[4,8]
%5 = mul %1, %4 : f32[4,8]
%6 = exp %0 : f32[4,8]
%7 = add %6, %5 : f32[4,8]
output "y" = %7
output "t" = %1
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    expect_executable(g, plan(g, policy));
  }
}

// Operands that no kernel would otherwise store: a broadcast of a graph input, values
// computed from iota and constants only, and a constant itself. Each is materialized for the
// caller, and the kernels that do it generate code.
TEST(OpaqueOrder, EveryOpaqueOperandIsMaterialized) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[1,16]
%1 = broadcast %0 : f32[2,1,16]
%2 = opaque "op" (%1) : f32[2,1,16]
%3 = iota axis=1 : f32[1,16]
%4 = constant 0 : f32
%5 = broadcast %4 : f32[1,16]
%6 = add %3, %5 : f32[1,16]
%7 = opaque "op2" (%6, %4) : f32[1,16]
%8 = neg %7 : f32[1,16]
output "y" = %2
output "z" = %8
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    expect_executable(g, p);
    EXPECT_FALSE(emit_module(g, p).empty());
  }
}

// An opaque result named by several outputs: the operation writes the first, a copy kernel
// the others (once nothing wrote them).
TEST(OpaqueOrder, AnOpaqueResultNamedByTwoOutputsIsCopiedToTheSecond) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = opaque "mm" (%0) : f32[4,8]
%2 = exp %1 : f32[4,8]
output "a" = %1
output "b" = %1
output "c" = %2
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    expect_executable(g, p);
    ASSERT_EQ(p.opaque_steps.size(), 1u);
    EXPECT_EQ(p.opaque_steps[0].result.kind, ParamKind::kOutput);
    EXPECT_EQ(p.opaque_steps[0].result.index, 0u);
    // Read mm's result, write the copy "b" and exp's "c".
    EXPECT_EQ(p.lower_bound_bytes, 3u * 128u);
    EXPECT_GE(p.planned_bytes, p.lower_bound_bytes);
  }
}

// An opaque operation reading a constant, its result named by two outputs: the copy to the
// second output waits for the operation, which waits for the kernel materializing the
// constant, so the two copy kernels never share a launch nor run in the wrong order.
TEST(OpaqueOrder, TheCopyOfAnOpaqueResultWaitsForTheCopyOfItsConstantOperand) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[2,3]
%1 = constant 1e-05 : f32
%2 = opaque "matmul" (%0, %1) : f32[2,2]
output "s" = %2
output "m" = %2
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    expect_executable(g, p);
    ASSERT_EQ(p.kernels.size(), 2u);
    ASSERT_EQ(p.steps.size(), 3u);
    EXPECT_EQ(p.steps[1].kind, StepKind::kOpaque);
  }
}

// Opaque operations that read only graph inputs run before any kernel; one that reads another
// opaque result runs after it; the steps name each opaque operand's buffer.
TEST(OpaqueOrder, StepsPlaceEachOpaqueOperationAsSoonAsItsOperandsExist) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = input "w" : f32[8,8]
%2 = opaque "mm" (%0, %1) : f32[4,8]
%3 = opaque "act" (%2) : f32[4,8]
%4 = exp %3 : f32[4,8]
%5 = opaque "mm2" (%4, %1) : f32[4,8]
%6 = add %5, %4 : f32[4,8]
output "y" = %6
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    expect_executable(g, p);
    ASSERT_GE(p.steps.size(), 3u);
    EXPECT_EQ(p.steps[0].kind, StepKind::kOpaque);
    EXPECT_EQ(p.opaque_ops[p.steps[0].index], 2);
    EXPECT_EQ(p.steps[1].kind, StepKind::kOpaque);
    EXPECT_EQ(p.opaque_ops[p.steps[1].index], 3);
    const OpaqueStep& mm = p.opaque_steps[0];
    EXPECT_EQ(mm.operands[0].kind, ParamKind::kInput);
    EXPECT_EQ(mm.operands[0].index, 0u);
    EXPECT_EQ(mm.operands[1].kind, ParamKind::kInput);
    EXPECT_EQ(mm.operands[1].index, 1u);
    EXPECT_EQ(mm.result.kind, ParamKind::kWorkspace);
  }
}

// y = x + mm(rmsnorm(x)): the norm's input also feeds the residual add after the opaque
// operation, so its kernel has two consumer kernels; the norm is still one kernel.
TEST(OpaqueOrder, ANormWhoseInputAResidualReadsLaterIsOneKernel) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[8,64]
%1 = input "g" : f32[64]
%2 = exp %0 : f32[8,64]
%3 = mul %2, %2 : f32[8,64]
%4 = reduce_mean %3 axes=[1] keepdims=true : f32[8,1]
%5 = constant 1e-6 : f32
%6 = broadcast %5 : f32[8,1]
%7 = add %4, %6 : f32[8,1]
%8 = rsqrt %7 : f32[8,1]
%9 = broadcast %8 : f32[8,64]
%10 = mul %2, %9 : f32[8,64]
%11 = broadcast %1 : f32[8,64]
%12 = mul %10, %11 : f32[8,64]
%13 = opaque "mm" (%12) : f32[8,64]
%14 = add %2, %13 : f32[8,64]
output "y" = %14
)");
  const FusionPlan p = plan(g, FusionPolicy::kStitch);
  expect_executable(g, p);
  // The norm (with exp) before the operation, the residual add after it.
  EXPECT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.is_member(4)) {
      EXPECT_TRUE(k.spec.is_member(12)) << dump_plan(g, p);
    }
  }
}

// q and k of a QKV split, scaled as [T, H, D] values, and v, a slice of [T, H*D]: kernels of
// one element count share a flat domain, so the region before attention is one kernel.
TEST(OpaqueOrder, ElementwiseKernelsOfOneSizeShareAFlatDomain) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "qkv" : f32[8,192]
%1 = slice %0 start=[0,0] stop=[8,64] step=[1,1] : f32[8,64]
%2 = reshape %1 : f32[8,4,16]
%3 = constant 0.25 : f32
%4 = broadcast %3 : f32[8,4,16]
%5 = mul %2, %4 : f32[8,4,16]
%6 = slice %0 start=[0,64] stop=[8,128] step=[1,1] : f32[8,64]
%7 = reshape %6 : f32[8,4,16]
%8 = exp %7 : f32[8,4,16]
%9 = slice %0 start=[0,128] stop=[8,192] step=[1,1] : f32[8,64]
%10 = opaque "attention" (%5, %8, %9) : f32[8,4,16]
output "o" = %10
)");
  const FusionPlan p = plan(g, FusionPolicy::kStitch);
  expect_executable(g, p);
  EXPECT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
}

}  // namespace
}  // namespace fstitch
