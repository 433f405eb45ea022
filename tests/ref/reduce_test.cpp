// Reference evaluator: reductions, with expected values from explicit loops in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
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
using reftest::kInf;
using reftest::kNaN;

HostBuffer run_reduce(OpKind op, const HostBuffer& x, const Dims& dims, const std::vector<int64_t>& axes,
                      bool keepdims, Dims* out_dims = nullptr) {
  Graph g;
  ValueId in = build_input(g, "x", x.dtype, dims);
  ValueId r = build_reduce(g, op, in, axes, keepdims);
  build_output(g, "y", r);
  if (out_dims) *out_dims = g.node(r).dims;
  return evaluate(g, {x})[0];
}

// Reduces a [2,3,4] array over the axes flagged in `reduced`, by explicit loops: for each
// output position, the elements of x that map to it, in row-major order.
std::vector<std::vector<double>> groups_2x3x4(const std::vector<double>& x, const bool reduced[3]) {
  const int64_t dims[3] = {2, 3, 4};
  int64_t out_dims[3];
  for (int d = 0; d < 3; ++d) out_dims[d] = reduced[d] ? 1 : dims[d];
  std::vector<std::vector<double>> groups(static_cast<size_t>(out_dims[0] * out_dims[1] * out_dims[2]));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        const int64_t oi = reduced[0] ? 0 : i, oj = reduced[1] ? 0 : j, ok = reduced[2] ? 0 : k;
        groups[static_cast<size_t>((oi * out_dims[1] + oj) * out_dims[2] + ok)].push_back(
            x[static_cast<size_t>((i * 3 + j) * 4 + k)]);
      }
    }
  }
  return groups;
}

struct ReduceCase {
  OpKind op;
  std::function<double(const std::vector<double>&)> fn;
};

double sum_of(const std::vector<double>& g) {
  double s = 0;
  for (double v : g) s += v;
  return s;
}

const std::vector<ReduceCase>& float_reduce_cases() {
  static const std::vector<ReduceCase> cases = {
      {OpKind::kReduceSum, sum_of},
      {OpKind::kReduceMean,
       [](const std::vector<double>& g) { return sum_of(g) / static_cast<double>(g.size()); }},
      {OpKind::kReduceProd,
       [](const std::vector<double>& g) {
         double p = 1;
         for (double v : g) p *= v;
         return p;
       }},
      {OpKind::kReduceMax,
       [](const std::vector<double>& g) {
         double m = -kInf;
         for (double v : g) {
           if (std::isnan(v)) return kNaN;
           if (v > m) m = v;
         }
         return m;
       }},
      {OpKind::kReduceMin,
       [](const std::vector<double>& g) {
         double m = kInf;
         for (double v : g) {
           if (std::isnan(v)) return kNaN;
           if (v < m) m = v;
         }
         return m;
       }},
  };
  return cases;
}

TEST(RefReduce, EveryOpEveryAxisSetEveryFloatDtype) {
  // Distinct values with mixed signs so max/min/prod differ per group.
  std::vector<double> values;
  for (int k = 0; k < 24; ++k) values.push_back((k % 2 ? -1.0 : 1.0) * (0.75 + 0.37 * k));
  // Axis lists as a user writes them (negative ones too), and which of the 3 axes they mean.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<bool>>> axis_sets = {
      {{0}, {true, false, false}},     {{1}, {false, true, false}},     {{-1}, {false, false, true}},
      {{0, 2}, {true, false, true}},   {{-1, -3}, {true, false, true}}, {{2, 1}, {false, true, true}},
      {{0, 1, 2}, {true, true, true}},
  };
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer in = float_buffer(dtype, values);
    const std::vector<double> x = float_values(in);
    for (const ReduceCase& c : float_reduce_cases()) {
      for (const auto& [axes, flags] : axis_sets) {
        const bool reduced[3] = {flags[0], flags[1], flags[2]};
        std::vector<double> expected;
        for (const auto& group : groups_2x3x4(x, reduced))
          expected.push_back(reftest::round_to(dtype, c.fn(group)));
        for (bool keepdims : {false, true}) {
          Dims out_dims;
          const HostBuffer out = run_reduce(c.op, in, {2, 3, 4}, axes, keepdims, &out_dims);
          Dims expected_dims;
          const int64_t dims[3] = {2, 3, 4};
          for (int d = 0; d < 3; ++d) {
            if (!reduced[d]) {
              expected_dims.push_back(dims[d]);
            } else if (keepdims) {
              expected_dims.push_back(1);
            }
          }
          EXPECT_EQ(out_dims, expected_dims);
          expect_same_values(float_values(out), expected,
                             std::string(op_name(c.op)) + " " + dtype_name(dtype) + " axes " +
                                 dims_to_string(axes) + (keepdims ? " keepdims" : ""));
        }
      }
    }
  }
}

TEST(RefReduce, KnownValuesWithKeepdims) {
  // [[1,2,3],[4,5,6]]
  const HostBuffer x = float_buffer(DType::kF32, {1, 2, 3, 4, 5, 6});
  Dims dims;
  expect_same_values(float_values(run_reduce(OpKind::kReduceSum, x, {2, 3}, {1}, true, &dims)), {6, 15},
                     "sum rows");
  EXPECT_EQ(dims, (Dims{2, 1}));
  expect_same_values(float_values(run_reduce(OpKind::kReduceSum, x, {2, 3}, {0}, false, &dims)), {5, 7, 9},
                     "sum cols");
  EXPECT_EQ(dims, (Dims{3}));
  expect_same_values(float_values(run_reduce(OpKind::kReduceMean, x, {2, 3}, {0, 1}, false, &dims)), {3.5},
                     "mean");
  EXPECT_EQ(dims, (Dims{}));
  expect_same_values(float_values(run_reduce(OpKind::kReduceProd, x, {2, 3}, {-2, -1}, true, &dims)), {720},
                     "prod");
  EXPECT_EQ(dims, (Dims{1, 1}));
  expect_same_values(float_values(run_reduce(OpKind::kReduceMax, x, {2, 3}, {-1}, false)), {3, 6}, "max");
  expect_same_values(float_values(run_reduce(OpKind::kReduceMin, x, {2, 3}, {0}, true)), {1, 2, 3}, "min");
}

TEST(RefReduce, NaNPropagates) {
  // Row 0 has a NaN, row 1 has none; NaN anywhere in a group poisons every op.
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer x = float_buffer(dtype, {1.0, kNaN, -3.0, 2.0, -kInf, 0.5});
    const std::vector<std::pair<OpKind, std::vector<double>>> cases = {
        {OpKind::kReduceSum, {kNaN, -kInf}},  {OpKind::kReduceMean, {kNaN, -kInf}},
        {OpKind::kReduceProd, {kNaN, -kInf}}, {OpKind::kReduceMax, {kNaN, 2.0}},
        {OpKind::kReduceMin, {kNaN, -kInf}},
    };
    for (const auto& [op, expected] : cases) {
      expect_same_values(float_values(run_reduce(op, x, {2, 3}, {1}, false)), expected,
                         std::string(op_name(op)) + " " + dtype_name(dtype));
    }
  }
  // NaN last, after the maximum: it still wins.
  expect_same_values(
      float_values(run_reduce(OpKind::kReduceMax, float_buffer(DType::kF64, {5.0, kNaN}), {2}, {0}, false)),
      {kNaN}, "NaN last");
}

TEST(RefReduce, FloatsAccumulateInF64) {
  // f32: 1e8 + 1 - 1e8 is 1 in f64 accumulation, 0 in f32 accumulation.
  expect_same_values(float_values(run_reduce(OpKind::kReduceSum, float_buffer(DType::kF32, {1e8, 1.0, -1e8}),
                                             {3}, {0}, false)),
                     {1.0}, "f32 sum");
  // f16: 2048 + 1 + 1 = 2050 exactly (f16 steps would give 2048), mean 683.33 -> 683.5.
  const HostBuffer h = float_buffer(DType::kF16, {2048.0, 1.0, 1.0});
  expect_same_values(float_values(run_reduce(OpKind::kReduceSum, h, {3}, {0}, false)), {2050.0}, "f16 sum");
  expect_same_values(float_values(run_reduce(OpKind::kReduceMean, h, {3}, {0}, false)), {683.5}, "f16 mean");
  // 2048 + 1 + 2^-24 is just above the f16 tie at 2049, so it rounds up to 2050; f32 cannot
  // hold the 2^-24 and rounding through it would land on the tie and go down to 2048.
  const HostBuffer t = float_buffer(DType::kF16, {2048.0, 1.0, std::ldexp(1.0, -24)});
  expect_same_values(float_values(run_reduce(OpKind::kReduceSum, t, {3}, {0}, false)), {2050.0},
                     "f16 near tie");
  // bf16 prod: 3 * 3 * 3 = 27 exactly, then 27 * (1/3 in bf16) rounds once.
  const HostBuffer b = float_buffer(DType::kBF16, {3.0, 3.0, 3.0, 1.0 / 3.0});
  expect_same_values(float_values(run_reduce(OpKind::kReduceProd, b, {4}, {0}, false)),
                     {reftest::round_to(DType::kBF16, 27.0 * reftest::bf16_value(0x3EAB))}, "bf16 prod");
}

TEST(RefReduce, IntegersWrap) {
  EXPECT_EQ(int_values(
                run_reduce(OpKind::kReduceSum, int_buffer(DType::kI8, {100, 100, 100, -1}), {4}, {0}, false)),
            (std::vector<int64_t>{43}));  // 299 wraps to 43
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceProd, int_buffer(DType::kI8, {16, 16, 3}), {3}, {0}, false)),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(
      int_values(run_reduce(OpKind::kReduceSum, int_buffer(DType::kU8, {200, 100, 255}), {3}, {0}, false)),
      (std::vector<int64_t>{43}));  // 555 mod 256
  EXPECT_EQ(
      int_values(run_reduce(OpKind::kReduceSum, int_buffer(DType::kI32, {INT32_MAX, 1, 1}), {3}, {0}, false)),
      (std::vector<int64_t>{INT32_MIN + 1}));
  // Sums that leave int32 in the middle but come back: int64 accumulation wraps only at the end.
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceSum, int_buffer(DType::kI32, {INT32_MAX, 10, -20}), {3}, {0},
                                  false)),
            (std::vector<int64_t>{INT32_MAX - 10}));
  EXPECT_EQ(
      int_values(run_reduce(OpKind::kReduceSum, int_buffer(DType::kI64, {INT64_MAX, 2}), {2}, {0}, false)),
      (std::vector<int64_t>{INT64_MIN + 1}));
  EXPECT_EQ(
      int_values(run_reduce(OpKind::kReduceProd,
                            int_buffer(DType::kI64, {INT64_C(1) << 40, INT64_C(1) << 30}), {2}, {0}, false)),
      (std::vector<int64_t>{0}));
}

TEST(RefReduce, IntegerMaxMinAndMultiAxis) {
  // [2,2,3] i32, reduce over {0,2}: groups are x[:, j, :].
  const std::vector<int64_t> x = {5, -7, 3, 0, 9, 2, -1, 8, 4, INT32_MIN, 1, INT32_MAX};
  const HostBuffer in = int_buffer(DType::kI32, x);
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceMax, in, {2, 2, 3}, {0, 2}, false)),
            (std::vector<int64_t>{8, INT32_MAX}));
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceMin, in, {2, 2, 3}, {2, 0}, true)),
            (std::vector<int64_t>{-7, INT32_MIN}));
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceSum, in, {2, 2, 3}, {-3}, false)),
            (std::vector<int64_t>{4, 1, 7, INT32_MIN, 10, INT32_MIN + 1}));
  EXPECT_EQ(
      int_values(run_reduce(OpKind::kReduceMax, int_buffer(DType::kU8, {3, 255, 0, 7}), {2, 2}, {1}, false)),
      (std::vector<int64_t>{255, 7}));
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceMin, int_buffer(DType::kI64, {INT64_MIN, INT64_MAX}), {2},
                                  {0}, true)),
            (std::vector<int64_t>{INT64_MIN}));
}

TEST(RefReduce, BoolMaxIsAnyMinIsAll) {
  // Rows: all false, mixed, all true (with bytes other than 1).
  const HostBuffer b = int_buffer(DType::kBool, {0, 0, 0, 0, 2, 0, 1, 0xFF, 7});
  Dims dims;
  const HostBuffer any = run_reduce(OpKind::kReduceMax, b, {3, 3}, {1}, false, &dims);
  EXPECT_EQ(any.dtype, DType::kBool);
  EXPECT_EQ(int_values(any), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceMin, b, {3, 3}, {1}, false)),
            (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(int_values(run_reduce(OpKind::kReduceMax, b, {3, 3}, {0, 1}, true)), (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace fstitch
