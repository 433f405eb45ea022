// The comparison and the tolerance analysis of the differential harness, on hand-made data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "differential/compare.hpp"
#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

Tolerance only_output_tolerance(const Graph& g) {
  const std::vector<Tolerance> t = output_tolerances(g);
  EXPECT_EQ(t.size(), 1u);
  return t.empty() ? Tolerance{} : t[0];
}

TEST(OutputTolerances, LayoutAndSelectionOfInputsAreExact) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4, 3});
  ValueId y = build_input(g, "y", DType::kF32, {3});
  ValueId m = build_binary(g, OpKind::kMax, build_permute(g, build_reshape(g, x, {3, 4}), {1, 0}), y);
  ValueId r = build_reduce(g, OpKind::kReduceMin, build_unary(g, OpKind::kNeg, m), {1}, false);
  build_output(g, "out", build_cast(g, r, DType::kF16));
  const Tolerance t = only_output_tolerance(g);
  EXPECT_TRUE(t.exact);
}

TEST(OutputTolerances, ArithmeticIsInexactAtItsDtype) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4});
  build_output(g, "out", build_binary(g, OpKind::kAdd, x, x));
  const Tolerance t = only_output_tolerance(g);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.l2, 1e-5);
  EXPECT_DOUBLE_EQ(t.max_over_rms, 1e-4);
}

TEST(OutputTolerances, HalfPrecisionOnThePathLoosensAnF32Output) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4});
  ValueId h = build_unary(g, OpKind::kExp, build_cast(g, x, DType::kF16));  // computed in f16
  build_output(g, "out", build_unary(g, OpKind::kTanh, build_cast(g, h, DType::kF32)));
  const Tolerance t = only_output_tolerance(g);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.l2, 1e-2);
}

TEST(OutputTolerances, RoundingAComputedValueToHalfIsInexact) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4});
  build_output(g, "out", build_cast(g, build_unary(g, OpKind::kSin, x), DType::kBF16));
  EXPECT_DOUBLE_EQ(only_output_tolerance(g).l2, 1e-2);
}

TEST(OutputTolerances, F64ToHalfCastIsOneRoundingAndExact) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {4});
  build_output(g, "out", build_cast(g, x, DType::kF16));
  EXPECT_TRUE(only_output_tolerance(g).exact);
}

TEST(OutputTolerances, IntegerAndBoolOutputsAreExact) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kI8, {5});
  ValueId b = build_input(g, "b", DType::kI8, {5});
  build_output(g, "sum", build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, a, b), {0}, true));
  build_output(g, "lt", build_binary(g, OpKind::kLt, a, b));
  for (const Tolerance& t : output_tolerances(g)) EXPECT_TRUE(t.exact);
}

TEST(OutputTolerances, SumsAndMeansAreInexact) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {4, 4});
  build_output(g, "out", build_reduce(g, OpKind::kReduceMean, x, {1}, false));
  EXPECT_DOUBLE_EQ(only_output_tolerance(g).l2, 1e-5);
}

const Tolerance kF32{false, 1e-5, 1e-4};
const Tolerance kHalf{false, 1e-2, 1e-1};

TEST(CompareOutput, IdenticalBuffersPass) {
  const std::vector<float> ref = {1, -2, 3, 0.5f};
  const Comparison c = compare_output(ref.data(), ref.data(), DType::kF32, {2, 2}, kF32);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.l2_error, 0.0);
  EXPECT_TRUE(c.report.empty());
}

TEST(CompareOutput, RelativeL2ErrorIsMeasuredAgainstTheReferenceNorm) {
  const std::vector<double> ref = {3, 4};
  const std::vector<double> close = {3, 4 + 4e-5};  // ||err|| / ||ref|| = 4e-5 / 5 = 8e-6
  Comparison c = compare_output(close.data(), ref.data(), DType::kF64, {2}, kF32);
  EXPECT_TRUE(c.ok) << c.report;
  EXPECT_NEAR(c.l2_error, 8e-6, 1e-12);
  const std::vector<double> far = {3, 4 + 6e-5};  // 1.2e-5
  c = compare_output(far.data(), ref.data(), DType::kF64, {2}, kF32);
  EXPECT_FALSE(c.ok);
  EXPECT_NEAR(c.l2_error, 1.2e-5, 1e-12);
  EXPECT_NE(c.report.find("relative L2 error"), std::string::npos) << c.report;
}

TEST(CompareOutput, NanWhereTheReferenceIsFiniteFails) {
  std::vector<float> ref(1000, 1.0f);
  std::vector<float> got = ref;
  got[999] = std::numeric_limits<float>::quiet_NaN();
  const Comparison c = compare_output(got.data(), ref.data(), DType::kF32, {10, 100}, kHalf);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad_elements, 1);
  EXPECT_NE(c.report.find("[9,99]: got nan"), std::string::npos) << c.report;
}

TEST(CompareOutput, InfinityWhereTheReferenceIsFiniteFails) {
  const std::vector<double> ref = {1, 2, 3};
  const std::vector<double> got = {1, std::numeric_limits<double>::infinity(), 3};
  EXPECT_FALSE(compare_output(got.data(), ref.data(), DType::kF64, {3}, kHalf).ok);
}

TEST(CompareOutput, MatchingNonFiniteValuesPass) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ref = {1, inf, std::nan("")};
  const std::vector<double> got = {1, inf, std::nan("")};
  EXPECT_TRUE(compare_output(got.data(), ref.data(), DType::kF64, {3}, kF32).ok);
  const std::vector<double> wrong_sign = {1, -inf, std::nan("")};
  EXPECT_FALSE(compare_output(wrong_sign.data(), ref.data(), DType::kF64, {3}, kF32).ok);
}

TEST(CompareOutput, OneBadElementAmongManyFailsTheMaximumCheck) {
  // Relative L2 0.5 / 100 = 5e-3 passes 1e-2, but one element off by half the RMS does not.
  std::vector<double> ref(10000, 1.0);
  std::vector<double> got = ref;
  got[1234] = 1.5;
  const Comparison c = compare_output(got.data(), ref.data(), DType::kF64, {10000}, kHalf);
  EXPECT_NEAR(c.l2_error, 5e-3, 1e-12);
  EXPECT_NEAR(c.max_over_rms, 0.5, 1e-12);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.report.find("[1234]: got 1.5, expected 1"), std::string::npos) << c.report;
}

TEST(CompareOutput, ExactComparisonOfIntegersReportsCoordinates) {
  const std::vector<int32_t> ref = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> got = ref;
  EXPECT_TRUE(compare_output(got.data(), ref.data(), DType::kI32, {2, 3}, Tolerance{}).ok);
  got[4] = -5;
  const Comparison c = compare_output(got.data(), ref.data(), DType::kI32, {2, 3}, Tolerance{});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad_elements, 1);
  EXPECT_NE(c.report.find("[1,1]: got -5, expected 5"), std::string::npos) << c.report;
}

TEST(CompareOutput, ExactFloatsMustMatchBitForValue) {
  const std::vector<float> ref = {0.1f, 0.2f};
  const std::vector<float> got = {0.1f, std::nextafter(0.2f, 1.0f)};
  EXPECT_FALSE(compare_output(got.data(), ref.data(), DType::kF32, {2}, Tolerance{}).ok);
  EXPECT_TRUE(compare_output(got.data(), ref.data(), DType::kF32, {2}, kF32).ok);
}

TEST(CompareOutput, AllZeroReferenceNeedsAllZeroResult) {
  const std::vector<float> ref = {0, 0, 0};
  const std::vector<float> got = {0, 1e-20f, 0};
  EXPECT_FALSE(compare_output(got.data(), ref.data(), DType::kF32, {3}, kHalf).ok);
  const std::vector<float> zeros = {0, -0.0f, 0};
  EXPECT_TRUE(compare_output(zeros.data(), ref.data(), DType::kF32, {3}, kF32).ok);
}

}  // namespace
}  // namespace fstitch::testing
