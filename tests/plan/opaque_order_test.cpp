// Plans around opaque operations are executable: no kernel both produces what an opaque
// operation reads and consumes its result, and the launch order lets every opaque operation
// run between kernels once what it reads exists.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/emit.hpp"
#include "ir/text.hpp"
#include "plan/plan.hpp"

namespace fstitch {
namespace {

FusionPlan plan(const Graph& g, FusionPolicy policy) {
  FusionOptions o;
  o.policy = policy;
  o.target_sm = 90;
  return plan_fusion(g, o);
}

// Runs the plan symbolically: kernels in plan order, and before each kernel (and at the
// end) every opaque operation whose operands exist. Fails the test at the first kernel or
// opaque operation that would read a value nothing has produced yet.
void expect_executable(const Graph& g, const FusionPlan& p) {
  std::set<ValueId> available(g.inputs().begin(), g.inputs().end());
  std::set<ValueId> pending(p.opaque_ops.begin(), p.opaque_ops.end());
  auto run_ready_opaque_ops = [&] {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = pending.begin(); it != pending.end();) {
        bool ready = true;
        for (ValueId operand : g.node(*it).operands) ready = ready && available.count(operand) != 0;
        if (ready) {
          available.insert(*it);
          it = pending.erase(it);
          progress = true;
        } else {
          ++it;
        }
      }
    }
  };
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    run_ready_opaque_ops();
    for (ValueId v : p.kernels[k].spec.loaded) {
      EXPECT_TRUE(available.count(v)) << "kernel " << k << " reads %" << v << " before anything produces it";
    }
    for (ValueId v : p.kernels[k].spec.stored) available.insert(v);
  }
  run_ready_opaque_ops();
  EXPECT_TRUE(pending.empty()) << pending.size() << " opaque operation(s) can never run";
  for (const GraphOutput& out : g.outputs()) EXPECT_TRUE(available.count(out.value)) << out.name;
}

const FusionPolicy kPolicies[] = {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone};

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

}  // namespace
}  // namespace fstitch
