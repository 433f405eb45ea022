// In-place updates (plan/in_place): which outputs may take an input's buffer, why the others
// may not, and which kernel parameters lose __restrict__.
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/emit.hpp"
#include "ir/builder.hpp"
#include "plan/arch.hpp"
#include "plan/in_place.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

bool may_take(const FusionPlan& p, size_t output, size_t input) {
  const auto& inputs = p.in_place_inputs.at(output);
  return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
}

InPlaceVerdict verdict(const Graph& g, const FusionPlan& p, size_t output, size_t input) {
  return check_in_place(g, p, output, input).verdict;
}

TEST(InPlace, ElementwiseUpdateMayTakeEveryInputItReads) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {64, 32});
  ValueId a = build_input(g, "a", DType::kF32, {64, 32});
  ValueId b = build_input(g, "b", DType::kF32, {32});  // broadcast: another element count
  build_output(g, "y", build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, x, a), b));
  FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.in_place_inputs.at(0), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(verdict(g, p, 0, 2), InPlaceVerdict::kDifferentElements);
  // The output and both inputs it may share lose __restrict__; b keeps it.
  const std::string source = emit_kernel(g, p.kernels[0]);
  for (const KernelParam& param : p.kernels[0].params) {
    const bool shared = param.kind != ParamKind::kInput || param.index != 2;
    EXPECT_EQ(param.aliasing == ParamAliasing::kMayAlias, shared) << source;
  }
  EXPECT_NE(source.find("const float* __restrict__"), std::string::npos) << source;  // b
  EXPECT_NE(source.find("float* p"), std::string::npos) << source;
  EXPECT_NE(dump_plan(g, p).find("output 0 \"y\" may take the buffer of input 0 \"x\" input 1 \"a\""),
            std::string::npos)
      << dump_plan(g, p);
}

TEST(InPlace, OtherElementSizesAreRefusedEvenAtTheSameByteSize) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16});
  ValueId d = build_input(g, "d", DType::kF64, {8});  // as many bytes as x
  build_output(g, "y", build_unary(g, OpKind::kNeg, x));
  build_output(g, "z", build_unary(g, OpKind::kNeg, d));
  FusionPlan p = plan(g);
  EXPECT_EQ(verdict(g, p, 0, 1), InPlaceVerdict::kDifferentElements);
  EXPECT_EQ(verdict(g, p, 1, 0), InPlaceVerdict::kDifferentElements);
  EXPECT_TRUE(may_take(p, 0, 0));
  EXPECT_TRUE(may_take(p, 1, 1));
}

TEST(InPlace, TransposeReadsOtherElements) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {8, 4});
  build_output(g, "y", build_permute(g, x, {1, 0}));
  FusionPlan p = plan(g);
  InPlaceCheck c = check_in_place(g, p, 0, 0);
  EXPECT_EQ(c.verdict, InPlaceVerdict::kReadElsewhere);
  EXPECT_NE(describe_in_place(g, p, 0, 0, c).find("permute"), std::string::npos);
  EXPECT_TRUE(p.in_place_inputs.at(0).empty());
  for (const KernelParam& param : p.kernels[0].params) EXPECT_EQ(param.aliasing, ParamAliasing::kRestrict);
}

TEST(InPlace, ReductionsAndRowValuesOfTheInputAreRefused) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 64});
  ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {1}, true);
  build_output(g, "centered", build_binary(g, OpKind::kSub, x, mean));
  FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  InPlaceCheck c = check_in_place(g, p, 0, 0);
  EXPECT_EQ(c.verdict, InPlaceVerdict::kReadElsewhere);
  EXPECT_EQ(c.via, mean);
}

TEST(InPlace, ElementwiseStoreBesideAReductionOfSomethingElse) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 64});
  ValueId w = build_input(g, "w", DType::kF32, {16, 64});
  ValueId sum = build_reduce(g, OpKind::kReduceSum, w, {1}, true);
  build_output(g, "y", build_binary(g, OpKind::kMul, x, build_binary(g, OpKind::kAdd, w, sum)));
  FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_TRUE(may_take(p, 0, 0)) << describe_in_place(g, p, 0, 0, check_in_place(g, p, 0, 0));
  EXPECT_EQ(verdict(g, p, 0, 1), InPlaceVerdict::kReadElsewhere);  // w is reduced
}

// A kernel whose rows wait at a grid barrier for their column totals reads its inputs in
// both walks over its rows: a value the first walk stores may not take the buffer of an input
// the second reads again; a value the second walk stores at its own element may.
TEST(InPlace, AValueStoredBeforeAGridBarrierLeavesTheInputsAlone) {
  Graph g;
  const Dims dims = {256, 256};
  const ValueId x = build_input(g, "x", DType::kF32, dims);
  const ValueId b = build_input(g, "b", DType::kF32, dims);
  const ValueId rows = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, x, {1}, true), dims);
  build_output(g, "u", build_binary(g, OpKind::kSub, x, rows));
  const ValueId columns = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
  build_output(g, "w", build_binary(g, OpKind::kMul, b, b));
  build_output(g, "z", build_binary(g, OpKind::kDiv, b, build_broadcast(g, columns, dims)));
  // On a device of 4 SMs with slow launches, where the model keeps the kernel whole.
  FusionOptions o;
  o.device = arch_params(90);
  o.device->sm_count = 4;
  o.device->launch_overhead_seconds = 10e-6;
  const FusionPlan p = plan_fusion(g, o);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  ASSERT_EQ(p.kernels[0].spec.stages, RowStages::kRowsAfterTotals) << dump_plan(g, p);
  for (size_t output : {0u, 1u}) {
    const InPlaceCheck c = check_in_place(g, p, output, 1);
    EXPECT_EQ(c.verdict, InPlaceVerdict::kReadAfterBarrier) << describe_in_place(g, p, output, 1, c);
    EXPECT_NE(describe_in_place(g, p, output, 1, c).find("before a grid barrier"), std::string::npos);
  }
  EXPECT_TRUE(may_take(p, 2, 1)) << describe_in_place(g, p, 2, 1, check_in_place(g, p, 2, 1));
  EXPECT_EQ(verdict(g, p, 2, 0), InPlaceVerdict::kReadElsewhere);  // x is reduced
}

TEST(InPlace, AnInputReadByALaterKernelIsRefused) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {256});
  build_output(g, "first", build_unary(g, OpKind::kExp, x));
  build_output(g, "second", build_unary(g, OpKind::kTanh, x));
  FusionPlan p = plan(g, FusionPolicy::kNone);
  ASSERT_EQ(p.kernels.size(), 2u);
  InPlaceCheck c = check_in_place(g, p, 0, 0);
  EXPECT_EQ(c.verdict, InPlaceVerdict::kReadLater);
  EXPECT_EQ(c.writer_kernel, 0);
  EXPECT_EQ(c.reader_kernel, 1);
  EXPECT_NE(describe_in_place(g, p, 0, 0, c).find("kernel fst_k1 reads input \"x\" after kernel fst_k0"),
            std::string::npos);
  // The last kernel may: the earlier one has read x before it runs.
  EXPECT_TRUE(may_take(p, 1, 0));
}

TEST(InPlace, AnOutputThatIsTheInputMayShareIt) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {64});
  build_output(g, "same", x);
  build_output(g, "later", build_unary(g, OpKind::kNeg, x));
  FusionPlan p = plan(g);
  EXPECT_TRUE(may_take(p, 0, 0));
}

TEST(InPlace, AnInputReadByAnOpaqueOperationIsRefused) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {64});
  ValueId mm = build_opaque(g, "matmul", {x}, DType::kF32, {64});
  build_output(g, "y", build_binary(g, OpKind::kAdd, build_unary(g, OpKind::kExp, x), mm));
  FusionPlan p = plan(g);
  InPlaceCheck c = check_in_place(g, p, 0, 0);
  EXPECT_EQ(c.verdict, InPlaceVerdict::kReadByOpaque);
  EXPECT_NE(describe_in_place(g, p, 0, 0, c).find("\"matmul\""), std::string::npos);
}

// A softmax written transposed puts each element at another row's position, which other
// blocks may not have read yet: the permuted output never takes the input's buffer.
TEST(InPlace, APermutedOutputIsWrittenElsewhere) {
  Graph g;
  const Dims dims = {64, 64};
  ValueId x = build_input(g, "x", DType::kF32, dims);
  ValueId m = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {1}, true), dims);
  ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, m));
  ValueId y = build_binary(g, OpKind::kDiv, e,
                           build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), dims));
  build_output(g, "y_transposed", build_permute(g, y, {1, 0}));
  build_output(g, "y", y);
  FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  EXPECT_EQ(verdict(g, p, 0, 0), InPlaceVerdict::kReadElsewhere);
  EXPECT_FALSE(may_take(p, 0, 0));
}

}  // namespace
}  // namespace fstitch
