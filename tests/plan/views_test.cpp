// Views are free: a reshape, or a permute that keeps the memory order, of a value in memory
// reads that value's buffer. No kernel copies a view for an opaque operation or an output.
#include <gtest/gtest.h>

#include <string>

#include "ir/text.hpp"
#include "plan/in_place.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"
#include "plan/views.hpp"

namespace fstitch {
namespace {

using testing::kPolicies;
using testing::plan;

bool some_kernel_has(const FusionPlan& p, ValueId v) {
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.is_member(v)) return true;
  }
  return false;
}

// The location the kernel storing `v` writes it to (the first write of it); fails if none.
ValueLocation written_location(const FusionPlan& p, ValueId v) {
  for (const PlannedKernel& k : p.kernels) {
    for (const KernelParam& param : k.params) {
      if (param.written && param.stored_value() == v) return {param.kind, param.index};
    }
  }
  ADD_FAILURE() << "no kernel writes %" << v;
  return {ParamKind::kWorkspace, 0};
}

// mm(reshape(x * 2)): the opaque operation reads the product's buffer; no kernel reshapes.
TEST(Views, AnOpaqueOperationReadsAReshapeInItsRootsBuffer) {
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
    const FusionPlan p = plan(g, policy);
    EXPECT_FALSE(some_kernel_has(p, 5));
    EXPECT_EQ(storage_of(p, 5), 4);
    ASSERT_EQ(p.opaque_steps.size(), 1u);
    const ValueLocation stored = written_location(p, 4);
    EXPECT_EQ(p.opaque_steps[0].operands[0].kind, stored.kind);
    EXPECT_EQ(p.opaque_steps[0].operands[0].index, stored.index);
    EXPECT_GE(p.planned_bytes, p.lower_bound_bytes);
  }
}

// An opaque operation reading a reshape of a graph input reads the input itself: no kernel.
TEST(Views, AViewOfAnInputIsTheInputsBuffer) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = reshape %0 : f32[2,16]
%2 = permute %1 perm=[1,0] : f32[16,2]
%3 = reshape %0 : f32[32]
%4 = opaque "op" (%1, %3) : f32[4]
output "y" = %4
)");
  const FusionPlan p = plan(g);
  EXPECT_TRUE(p.kernels.empty());
  ASSERT_EQ(p.opaque_steps.size(), 1u);
  for (const ValueLocation& at : p.opaque_steps[0].operands) {
    EXPECT_EQ(at.kind, ParamKind::kInput);
    EXPECT_EQ(at.index, 0u);
  }
  EXPECT_EQ(p.opaque_steps[0].result.kind, ParamKind::kOutput);
  EXPECT_EQ(p.lower_bound_bytes, 0u);
  EXPECT_EQ(p.planned_bytes, 0u);
}

// reshape(reduce_sum(x)) as an output: the reduction's kernel writes the output itself.
TEST(Views, AnOutputThatViewsAKernelsValueIsWrittenByThatKernel) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = reduce_sum %0 axes=[1] keepdims=false : f32[4]
%2 = reshape %1 : f32[2,2]
output "b" = %2
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(p.workspace_bytes, 0u);
    const ValueLocation at = written_location(p, 1);
    EXPECT_EQ(at.kind, ParamKind::kOutput);
    EXPECT_EQ(at.index, 0u);
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
  }
}

// A value that is an output and also viewed by another output: its kernel writes both.
TEST(Views, AKernelWritesAValueAndItsOutputViews) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
%2 = reshape %1 : f32[32]
%3 = reshape %1 : f32[8,4]
output "e" = %1
output "flat" = %2
output "tall" = %3
)");
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  size_t writes = 0;
  for (const KernelParam& param : p.kernels[0].params) writes += param.written ? 1 : 0;
  EXPECT_EQ(writes, 3u);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
}

// reshape(mm(x)) as an output: the opaque operation writes the output directly.
TEST(Views, AnOpaqueResultViewedByAnOutputIsWrittenThere) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = opaque "mm" (%0) : f32[4,8]
%2 = reshape %1 : f32[32]
%3 = reshape %1 : f32[8,4]
output "flat" = %2
output "tall" = %3
)");
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.opaque_steps.size(), 1u);
  EXPECT_EQ(p.opaque_steps[0].result.kind, ParamKind::kOutput);
  EXPECT_EQ(p.opaque_steps[0].result.index, 0u);
  // The second output is a copy of the first: one kernel, no reshape member.
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_TRUE(p.kernels[0].spec.members.empty());
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_EQ(p.lower_bound_bytes, 2u * 128u);  // read the first output, write the second
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
}

// An output that views a graph input needs a buffer of its own: a kernel copies it.
TEST(Views, AnOutputThatViewsAnInputIsCopied) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = reshape %0 : f32[32]
output "flat" = %1
)");
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_TRUE(p.view_roots.empty());
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
}

TEST(Views, PermutesThatMoveOnlyUnitAxesAreViews) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,1,8]
%1 = permute %0 perm=[1,0,2] : f32[1,4,8]
%2 = permute %0 perm=[0,2,1] : f32[4,8,1]
%3 = permute %0 perm=[2,1,0] : f32[8,1,4]
%4 = reshape %0 : f32[32]
output "a" = %1
output "b" = %2
output "c" = %3
output "d" = %4
)");
  EXPECT_TRUE(is_view_op(g, 1));
  EXPECT_TRUE(is_view_op(g, 2));
  EXPECT_FALSE(is_view_op(g, 3));
  EXPECT_TRUE(is_view_op(g, 4));
}

// Chains of views read the first root; the views in between cost nothing either.
TEST(Views, ChainsOfViewsReadTheirRoot) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
%2 = reshape %1 : f32[32]
%3 = reshape %2 : f32[2,16]
%4 = opaque "op" (%3) : f32[4,8]
%5 = add %4, %1 : f32[4,8]
output "y" = %5
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    EXPECT_FALSE(some_kernel_has(p, 2));
    EXPECT_FALSE(some_kernel_has(p, 3));
    EXPECT_EQ(storage_of(p, 3), 1);
    EXPECT_EQ(p.kernels.size(), 2u);
    EXPECT_GE(p.planned_bytes, p.lower_bound_bytes);
  }
}

// A kernel cannot read a view of its own member: the view's buffer is written by that kernel.
TEST(Views, AKernelNeverReadsAViewOfItsOwnMember) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
%2 = reshape %1 : f32[8,4]
%3 = opaque "op" (%2) : f32[4,8]
%4 = reshape %2 : f32[4,8]
%5 = add %4, %1 : f32[4,8]
%6 = add %5, %3 : f32[4,8]
output "y" = %6
)");
  for (FusionPolicy policy : kPolicies) {
    SCOPED_TRACE(fusion_policy_name(policy));
    const FusionPlan p = plan(g, policy);
    for (const PlannedKernel& k : p.kernels) {
      for (ValueId v : k.spec.loaded) EXPECT_FALSE(k.spec.is_member(storage_of(p, v))) << "%" << v;
    }
  }
}

// An output may not take the buffer of an input that an opaque operation reads through a view.
TEST(Views, AnInputReadByAnOpaqueOperationThroughAViewIsNotUpdatedInPlace) {
  const Graph g = parse_graph(R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = reshape %0 : f32[32]
%2 = opaque "op" (%1) : f32[4,8]
%3 = exp %0 : f32[4,8]
%4 = add %3, %2 : f32[4,8]
output "y" = %4
)");
  const FusionPlan p = plan(g);
  EXPECT_EQ(check_in_place(g, p, 0, 0).verdict, InPlaceVerdict::kReadByOpaque);
}

}  // namespace
}  // namespace fstitch
