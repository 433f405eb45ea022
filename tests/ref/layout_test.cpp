// Reference evaluator: broadcast, reshape, permute, iota and constants.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ref/ref_test_util.hpp"

namespace fstitch {
namespace {

using reftest::evaluate;
using reftest::expect_same_values;
using reftest::float_buffer;
using reftest::float_values;
using reftest::HostBuffer;
using reftest::int_buffer;
using reftest::int_values;
using reftest::kNaN;

std::vector<int64_t> counting(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(start + k);
  return v;
}

TEST(RefBroadcast, RankGrowthAndStretching) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI32, {3, 1});
  build_output(g, "a", build_broadcast(g, x, {2, 3, 4}));  // rank grows, the 1 stretches
  build_output(g, "b", build_broadcast(g, x, {3, 1}));     // no-op
  const auto out = evaluate(g, {int_buffer(DType::kI32, {7, 8, 9})});
  std::vector<int64_t> expected;
  for (int i = 0; i < 2; ++i) {
    for (int64_t v : {7, 8, 9}) {
      for (int k = 0; k < 4; ++k) expected.push_back(v);
    }
  }
  EXPECT_EQ(int_values(out[0]), expected);
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{7, 8, 9}));
}

TEST(RefBroadcast, ScalarAndMiddleDims) {
  Graph g;
  ValueId s = build_input(g, "s", DType::kF16, {});
  ValueId m = build_input(g, "m", DType::kF64, {2, 1, 3});
  build_output(g, "a", build_broadcast(g, s, {2, 2}));
  build_output(g, "b", build_broadcast(g, m, {2, 2, 3}));
  const auto out =
      evaluate(g, {float_buffer(DType::kF16, {-1.5}), float_buffer(DType::kF64, {1, 2, 3, 4, 5, 6})});
  expect_same_values(float_values(out[0]), {-1.5, -1.5, -1.5, -1.5}, "scalar");
  expect_same_values(float_values(out[1]), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, "middle");
}

TEST(RefReshape, KeepsRowMajorOrder) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI64, {2, 3});
  ValueId r = build_reshape(g, x, {3, -1});
  // x is read again after the reshape, so the reshape must not take x's storage.
  ValueId sum = build_binary(g, OpKind::kAdd, build_reshape(g, r, {6}), build_reshape(g, x, {6}));
  build_output(g, "r", r);
  build_output(g, "sum", sum);
  build_output(g, "flat", build_reshape(g, x, {1, 6, 1}));
  const auto out = evaluate(g, {int_buffer(DType::kI64, counting(6, 1))});
  EXPECT_EQ(g.node(r).dims, (Dims{3, 2}));
  EXPECT_EQ(int_values(out[0]), counting(6, 1));
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(int_values(out[2]), counting(6, 1));
}

TEST(RefReshape, ToAndFromScalar) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBF16, {1, 1});
  ValueId s = build_reshape(g, x, {});
  build_output(g, "s", s);
  build_output(g, "back", build_reshape(g, build_unary(g, OpKind::kNeg, s), {1}));
  const auto out = evaluate(g, {float_buffer(DType::kBF16, {2.5})});
  expect_same_values(float_values(out[0]), {2.5}, "scalar");
  expect_same_values(float_values(out[1]), {-2.5}, "back");
}

TEST(RefPermute, ResultDimIIsOperandDimPermI) {
  const int64_t d0 = 2, d1 = 3, d2 = 4;
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {d0, d1, d2});
  ValueId p = build_permute(g, x, {2, 0, 1});
  build_output(g, "p", p);
  build_output(g, "id", build_permute(g, x, {0, 1, 2}));
  build_output(g, "swap", build_permute(g, x, {1, 0, 2}));
  std::vector<double> values;
  for (int64_t k = 0; k < d0 * d1 * d2; ++k) values.push_back(static_cast<double>(k));
  const auto out = evaluate(g, {float_buffer(DType::kF32, values)});
  ASSERT_EQ(g.node(p).dims, (Dims{d2, d0, d1}));
  auto at = [&](int64_t i, int64_t j, int64_t k) {
    return values[static_cast<size_t>((i * d1 + j) * d2 + k)];
  };
  std::vector<double> expected;
  for (int64_t k = 0; k < d2; ++k) {
    for (int64_t i = 0; i < d0; ++i) {
      for (int64_t j = 0; j < d1; ++j) expected.push_back(at(i, j, k));
    }
  }
  expect_same_values(float_values(out[0]), expected, "[2,0,1]");
  expect_same_values(float_values(out[1]), values, "identity");
  expected.clear();
  for (int64_t j = 0; j < d1; ++j) {
    for (int64_t i = 0; i < d0; ++i) {
      for (int64_t k = 0; k < d2; ++k) expected.push_back(at(i, j, k));
    }
  }
  expect_same_values(float_values(out[2]), expected, "[1,0,2]");
}

TEST(RefPermute, TransposeOfBoolAndScalar) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBool, {2, 3});
  ValueId s = build_input(g, "s", DType::kI8, {});
  build_output(g, "t", build_permute(g, x, {1, 0}));
  build_output(g, "s", build_permute(g, s, {}));
  const auto out =
      evaluate(g, {int_buffer(DType::kBool, {1, 0, 2, 0, 0xFF, 0}), int_buffer(DType::kI8, {-9})});
  EXPECT_EQ(int_values(out[0]), (std::vector<int64_t>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{-9}));
}

TEST(RefIota, IndexAlongAxis) {
  Graph g;
  build_output(g, "a0", build_iota(g, DType::kI32, {2, 3}, 0));
  build_output(g, "a1", build_iota(g, DType::kI32, {2, 3}, 1));
  build_output(g, "mid", build_iota(g, DType::kF32, {2, 3, 2}, 1));
  const auto out = evaluate(g, {});
  EXPECT_EQ(int_values(out[0]), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  expect_same_values(float_values(out[2]), {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}, "mid");
}

TEST(RefIota, ConvertsLikeACast) {
  Graph g;
  build_output(g, "i8", build_iota(g, DType::kI8, {300}, 0));
  build_output(g, "u8", build_iota(g, DType::kU8, {1, 258}, 1));
  build_output(g, "f16", build_iota(g, DType::kF16, {2052}, 0));
  const auto out = evaluate(g, {});
  const std::vector<int64_t> i8 = int_values(out[0]);
  EXPECT_EQ(i8[127], 127);
  EXPECT_EQ(i8[128], -128);
  EXPECT_EQ(i8[200], -56);
  EXPECT_EQ(i8[299], 43);
  const std::vector<int64_t> u8 = int_values(out[1]);
  EXPECT_EQ(u8[255], 255);
  EXPECT_EQ(u8[256], 0);
  EXPECT_EQ(u8[257], 1);
  const std::vector<double> f16 = float_values(out[2]);
  EXPECT_EQ(f16[2047], 2047.0);
  EXPECT_EQ(f16[2049], 2048.0);  // tie to even
  EXPECT_EQ(f16[2051], 2052.0);  // tie to even
}

TEST(RefConstant, ValueInItsDtype) {
  Graph g;
  ValueId third = build_constant_f64(g, DType::kF16, 1.0 / 3.0);
  build_output(g, "third", third);
  build_output(g, "wrapped", build_constant_i64(g, DType::kI8, 300));
  build_output(g, "nan", build_constant_f64(g, DType::kBF16, kNaN));
  ValueId x = build_input(g, "x", DType::kF16, {3});
  build_output(g, "x_plus", build_binary(g, OpKind::kAdd, x, third));
  const auto out = evaluate(g, {float_buffer(DType::kF16, {0.0, 1.0, -2.0})});
  EXPECT_EQ(reftest::raw_values<uint16_t>(out[0]), (std::vector<uint16_t>{0x3555}));
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{44}));
  const uint16_t nan_bits = reftest::raw_values<uint16_t>(out[2])[0];
  EXPECT_EQ(nan_bits & 0x7F80, 0x7F80);
  EXPECT_NE(nan_bits & 0x007F, 0);
  const double t = reftest::f16_value(0x3555);
  expect_same_values(float_values(out[3]),
                     {t, reftest::round_to(DType::kF16, 1.0 + t), reftest::round_to(DType::kF16, -2.0 + t)},
                     "x + 1/3");
}

}  // namespace
}  // namespace fstitch
