// The noise floor tells well-conditioned outputs from ill-conditioned ones.
#include <gtest/gtest.h>

#include <vector>

#include "differential/harness.hpp"
#include "differential/noise_floor.hpp"
#include "ir/builder.hpp"
#include "ref/evaluator.hpp"

namespace fstitch::testing {
namespace {

// The floor of the graph's only output, on random inputs.
NoiseFloor floor_of(const Graph& g) {
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<const void*> input_pointers;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    inputs.emplace_back(static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype));
    fill_random_input(inputs.back().data(), element_count(n.dims), n.dtype, 100 + i);
    input_pointers.push_back(inputs.back().data());
  }
  const Node& out = g.node(g.outputs().at(0).value);
  std::vector<unsigned char> reference(static_cast<size_t>(element_count(out.dims)) * dtype_size(out.dtype));
  evaluate_reference(g, input_pointers, {reference.data()});
  const std::vector<NoiseFloor> floors = measure_noise_floor(g, input_pointers, {reference.data()}, 7);
  EXPECT_EQ(floors.size(), 1u);
  return floors.at(0);
}

TEST(NoiseFloor, ExactOutputsHaveNone) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 32});
  ValueId y = build_input(g, "y", DType::kF32, {32});
  build_output(g, "out", build_binary(g, OpKind::kMax, build_unary(g, OpKind::kNeg, x), y));
  const NoiseFloor f = floor_of(g);
  EXPECT_EQ(f.l2, 0.0);
  EXPECT_EQ(f.max_over_rms, 0.0);
}

TEST(NoiseFloor, WellConditionedF32OutputsStayFarBelowTheirTolerance) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 32});
  ValueId t =
      build_binary(g, OpKind::kMul, build_unary(g, OpKind::kTanh, x), build_constant_f64(g, DType::kF32, 2));
  ValueId s = build_reduce(g, OpKind::kReduceSum, build_unary(g, OpKind::kExp, x), {1}, true);
  build_output(g, "out", build_binary(g, OpKind::kDiv, build_binary(g, OpKind::kAdd, t, x), s));
  const NoiseFloor f = floor_of(g);
  EXPECT_GT(f.l2, 0.0);
  EXPECT_LT(f.l2, 1e-6);
  EXPECT_LT(f.max_over_rms, 1e-5);
}

TEST(NoiseFloor, CancellationRaisesIt) {
  // v = 1 + x / 1000 hardly varies along a row; v - mean(v) keeps only the variation, and
  // the f32 rounding of v (about 6e-8) becomes about 1e-4 of the result.
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 64});
  ValueId v = build_binary(g, OpKind::kAdd,
                           build_binary(g, OpKind::kMul, x, build_constant_f64(g, DType::kF32, 1e-3)),
                           build_constant_f64(g, DType::kF32, 1.0));
  ValueId mean = build_reduce(g, OpKind::kReduceMean, v, {1}, true);
  build_output(g, "out", build_binary(g, OpKind::kSub, v, mean));
  const NoiseFloor f = floor_of(g);
  EXPECT_GT(f.l2, 1e-5);
  EXPECT_LT(f.l2, 1e-2);
}

TEST(NoiseFloor, ReductionsOfOneElementAreExact) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {16, 1});
  ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {1}, true);
  build_output(g, "out", build_binary(g, OpKind::kSub, x, mean));  // zero everywhere
  EXPECT_EQ(floor_of(g).l2, 0.0);
}

TEST(NoiseFloor, HalfPrecisionValuesMoveOnlyWhenTheirRoundingFlips) {
  // f16 values perturbed by f32 units rarely round differently: the floor stays well below
  // the f16 tolerance of 1e-2.
  Graph g;
  ValueId x = build_input(g, "x", DType::kF16, {64, 64});
  build_output(g, "out", build_unary(g, OpKind::kSin, build_unary(g, OpKind::kExp, x)));
  const NoiseFloor f = floor_of(g);
  EXPECT_LT(f.l2, 1e-3);
}

}  // namespace
}  // namespace fstitch::testing
