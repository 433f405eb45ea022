// Reference evaluator: unary and binary operations, select and cast, for every dtype family.
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

// A graph computing op(x) for a rank-1 input.
HostBuffer run_unary(OpKind op, const HostBuffer& x, int64_t n) {
  Graph g;
  ValueId in = build_input(g, "x", x.dtype, {n});
  build_output(g, "y", build_unary(g, op, in));
  return evaluate(g, {x})[0];
}

HostBuffer run_binary(OpKind op, const HostBuffer& a, const Dims& a_dims, const HostBuffer& b,
                      const Dims& b_dims) {
  Graph g;
  ValueId x = build_input(g, "a", a.dtype, a_dims);
  ValueId y = build_input(g, "b", b.dtype, b_dims);
  build_output(g, "c", build_binary(g, op, x, y));
  return evaluate(g, {a, b})[0];
}

HostBuffer run_cast(const HostBuffer& x, int64_t n, DType to) {
  Graph g;
  ValueId in = build_input(g, "x", x.dtype, {n});
  build_output(g, "y", build_cast(g, in, to));
  return evaluate(g, {x})[0];
}

int64_t size_of(const std::vector<double>& v) {
  return static_cast<int64_t>(v.size());
}
int64_t size_of(const std::vector<int64_t>& v) {
  return static_cast<int64_t>(v.size());
}

// Inputs covering signs, zeros, halves (for round), large values and the specials.
const std::vector<double> kFloatInputs = {-100.0, -10.0, -3.7,  -2.5, -1.5, -1.0, -0.5, -0.3,
                                          -0.0,   0.0,   0.3,   0.5,  1.0,  1.5,  2.5,  3.5,
                                          3.7,    10.0,  100.0, kNaN, kInf, -kInf};

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

struct FloatUnaryCase {
  OpKind op;
  std::function<double(double)> fn;
};

const std::vector<FloatUnaryCase>& float_unary_cases() {
  static const std::vector<FloatUnaryCase> cases = {
      {OpKind::kNeg, [](double x) { return -x; }},
      {OpKind::kAbs, [](double x) { return std::fabs(x); }},
      {OpKind::kExp, [](double x) { return std::exp(x); }},
      {OpKind::kLog, [](double x) { return std::log(x); }},
      {OpKind::kSqrt, [](double x) { return std::sqrt(x); }},
      {OpKind::kRsqrt, [](double x) { return 1.0 / std::sqrt(x); }},
      {OpKind::kReciprocal, [](double x) { return 1.0 / x; }},
      {OpKind::kTanh, [](double x) { return std::tanh(x); }},
      {OpKind::kSigmoid, sigmoid},
      {OpKind::kRelu, [](double x) { return std::isnan(x) ? x
                                            : x > 0       ? x
                                                          : 0.0; }},
      {OpKind::kGelu, [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }},
      {OpKind::kGeluTanh,
       [](double x) {
         const double c = std::sqrt(2.0 / 3.14159265358979323846);
         return x * 0.5 * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
       }},
      {OpKind::kSilu, [](double x) { return x * sigmoid(x); }},
      {OpKind::kErf, [](double x) { return std::erf(x); }},
      {OpKind::kSin, [](double x) { return std::sin(x); }},
      {OpKind::kCos, [](double x) { return std::cos(x); }},
      {OpKind::kFloor, [](double x) { return std::floor(x); }},
      {OpKind::kCeil, [](double x) { return std::ceil(x); }},
      {OpKind::kRound, [](double x) { return std::nearbyint(x); }},  // default mode: half to even
      {OpKind::kSign, [](double x) { return x > 0   ? 1.0
                                            : x < 0 ? -1.0
                                                    : x; }},
  };
  return cases;
}

TEST(RefUnary, FloatOpsInEveryFloatDtype) {
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer in = float_buffer(dtype, kFloatInputs);
    const std::vector<double> x = float_values(in);  // the inputs as the dtype holds them
    for (const FloatUnaryCase& c : float_unary_cases()) {
      const HostBuffer out = run_unary(c.op, in, size_of(x));
      ASSERT_EQ(out.dtype, dtype);
      std::vector<double> expected;
      for (double v : x) expected.push_back(reftest::round_to(dtype, c.fn(v)));
      expect_same_values(float_values(out), expected, std::string(op_name(c.op)) + " " + dtype_name(dtype));
    }
  }
}

// Every f16 and bf16 input: results are computed in f64 and rounded once, so values whose
// f64 result sits just beside a tie would expose a detour through f32.
TEST(RefUnary, EveryHalfPrecisionInput) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    std::vector<uint16_t> patterns;
    for (uint32_t b = 0; b <= 0xFFFF; ++b) patterns.push_back(static_cast<uint16_t>(b));
    const HostBuffer in = reftest::raw_buffer(dtype, patterns);
    const std::vector<double> x = float_values(in);
    for (const FloatUnaryCase& c : float_unary_cases()) {
      const std::vector<double> actual = float_values(run_unary(c.op, in, size_of(x)));
      ASSERT_EQ(actual.size(), x.size());
      int mismatches = 0;
      for (size_t k = 0; k < x.size() && mismatches < 5; ++k) {
        const double expected = reftest::round_to(dtype, c.fn(x[k]));
        if (!reftest::same_value(actual[k], expected)) {
          ++mismatches;
          ADD_FAILURE() << op_name(c.op) << " " << dtype_name(dtype) << " of pattern 0x" << std::hex << k
                        << std::dec << " (" << x[k] << "): got " << actual[k] << ", expected " << expected;
        }
      }
    }
  }
}

TEST(RefUnary, KnownFloatValues) {
  auto f64 = [](OpKind op, std::vector<double> x) {
    return float_values(run_unary(op, float_buffer(DType::kF64, x), size_of(x)));
  };
  const std::vector<double> gelu = f64(OpKind::kGelu, {1.0, -1.0, 0.0});
  EXPECT_NEAR(gelu[0], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(gelu[1], -0.15865525393145707, 1e-15);
  EXPECT_EQ(gelu[2], 0.0);
  // Large negative inputs keep their digits: 1 + erf(z) would cancel to 0 here.
  const std::vector<double> far = f64(OpKind::kGelu, {-10.0});
  EXPECT_NEAR(far[0], -7.619853024160593e-23, 1e-36);
  const std::vector<double> gelu_tanh = f64(OpKind::kGeluTanh, {1.0, -1.0});
  EXPECT_NEAR(gelu_tanh[0], 0.8411919906082768, 1e-15);
  EXPECT_NEAR(gelu_tanh[1], -0.15880800939172324, 1e-15);
  EXPECT_NEAR(f64(OpKind::kSilu, {1.0})[0], 0.7310585786300049, 1e-15);
  EXPECT_EQ(f64(OpKind::kSigmoid, {0.0})[0], 0.5);
  EXPECT_EQ(f64(OpKind::kSigmoid, {-1000.0})[0], 0.0);
  expect_same_values(f64(OpKind::kRound, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999999999999996, -0.2}),
                     {0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -0.0}, "round");
  expect_same_values(f64(OpKind::kRelu, {kNaN, -3.0, 3.0}), {kNaN, 0.0, 3.0}, "relu");
  expect_same_values(f64(OpKind::kSign, {kNaN, -3.0, 0.0, 7.0, -kInf}), {kNaN, -1.0, 0.0, 1.0, -1.0}, "sign");
  // f16: exp(1) = 2.71828... -> 2.71875 (0x4170); computed in f64, rounded once.
  const HostBuffer e =
      run_unary(OpKind::kExp, reftest::raw_buffer(DType::kF16, std::vector<uint16_t>{0x3C00}), 1);
  EXPECT_EQ(reftest::raw_values<uint16_t>(e)[0], 0x4170);
}

TEST(RefUnary, IntegerNegAbsWrap) {
  struct Case {
    DType dtype;
    std::vector<int64_t> x, neg, abs, relu, sign;
  };
  const std::vector<Case> cases = {
      {DType::kI8,
       {-128, -5, -1, 0, 1, 127},
       {-128, 5, 1, 0, -1, -127},
       {-128, 5, 1, 0, 1, 127},
       {0, 0, 0, 0, 1, 127},
       {-1, -1, -1, 0, 1, 1}},
      {DType::kI32,
       {INT32_MIN, -7, 0, 9, INT32_MAX},
       {INT32_MIN, 7, 0, -9, -INT32_MAX},
       {INT32_MIN, 7, 0, 9, INT32_MAX},
       {0, 0, 0, 9, INT32_MAX},
       {-1, -1, 0, 1, 1}},
      {DType::kI64,
       {INT64_MIN, -7, 0, 9, INT64_MAX},
       {INT64_MIN, 7, 0, -9, -INT64_MAX},
       {INT64_MIN, 7, 0, 9, INT64_MAX},
       {0, 0, 0, 9, INT64_MAX},
       {-1, -1, 0, 1, 1}},
      {DType::kU8,
       {0, 1, 2, 128, 255},
       {0, 255, 254, 128, 1},
       {0, 1, 2, 128, 255},
       {0, 1, 2, 128, 255},
       {0, 1, 1, 1, 1}},
  };
  for (const Case& c : cases) {
    const HostBuffer in = int_buffer(c.dtype, c.x);
    const int64_t n = size_of(c.x);
    EXPECT_EQ(int_values(run_unary(OpKind::kNeg, in, n)), c.neg) << dtype_name(c.dtype);
    EXPECT_EQ(int_values(run_unary(OpKind::kAbs, in, n)), c.abs) << dtype_name(c.dtype);
    EXPECT_EQ(int_values(run_unary(OpKind::kRelu, in, n)), c.relu) << dtype_name(c.dtype);
    EXPECT_EQ(int_values(run_unary(OpKind::kSign, in, n)), c.sign) << dtype_name(c.dtype);
  }
}

TEST(RefUnary, LogicalNotOfEveryDtype) {
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer out =
        run_unary(OpKind::kLogicalNot, float_buffer(dtype, {0.0, -0.0, kNaN, 1.5, -kInf, 1e-3}), 6);
    ASSERT_EQ(out.dtype, DType::kBool);
    EXPECT_EQ(int_values(out), (std::vector<int64_t>{1, 1, 0, 0, 0, 0})) << dtype_name(dtype);
  }
  EXPECT_EQ(int_values(run_unary(OpKind::kLogicalNot, int_buffer(DType::kI8, {0, -128, 5}), 3)),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(int_values(run_unary(OpKind::kLogicalNot, int_buffer(DType::kU8, {0, 255}), 2)),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(int_values(run_unary(OpKind::kLogicalNot, int_buffer(DType::kI64, {INT64_MIN, 0}), 2)),
            (std::vector<int64_t>{0, 1}));
  // Any nonzero bool byte is true.
  EXPECT_EQ(int_values(run_unary(OpKind::kLogicalNot, int_buffer(DType::kBool, {0, 1, 2, 0xFF}), 4)),
            (std::vector<int64_t>{1, 0, 0, 0}));
}

// Pairs covering signs, zeros, equal values, NaN and infinities on either side.
const std::vector<double> kLeft = {1.5, -2.0, 3.0,   0.0, -0.0, 2.0,  kNaN,
                                   1.0, kInf, -kInf, 7.0, 0.1,  -5.5, 4.0};
const std::vector<double> kRight = {2.25, -2.0, -4.0, -0.0, 0.0, 0.5, 1.0,
                                    kNaN, kInf, 2.0,  0.0,  0.2, 3.0, 2.0};

double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;  // +0 is the larger zero
  return a > b ? a : b;
}
double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

TEST(RefBinary, FloatArithmeticInEveryFloatDtype) {
  const std::vector<std::pair<OpKind, std::function<double(double, double)>>> cases = {
      {OpKind::kAdd, [](double a, double b) { return a + b; }},
      {OpKind::kSub, [](double a, double b) { return a - b; }},
      {OpKind::kMul, [](double a, double b) { return a * b; }},
      {OpKind::kDiv, [](double a, double b) { return a / b; }},
      {OpKind::kPow, [](double a, double b) { return std::pow(a, b); }},
      {OpKind::kMax, nan_max},
      {OpKind::kMin, nan_min},
  };
  const auto n = static_cast<int64_t>(kLeft.size());
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer a = float_buffer(dtype, kLeft);
    const HostBuffer b = float_buffer(dtype, kRight);
    const std::vector<double> x = float_values(a);
    const std::vector<double> y = float_values(b);
    for (const auto& [op, fn] : cases) {
      const HostBuffer out = run_binary(op, a, {n}, b, {n});
      ASSERT_EQ(out.dtype, dtype);
      std::vector<double> expected;
      for (size_t k = 0; k < x.size(); ++k) expected.push_back(reftest::round_to(dtype, fn(x[k], y[k])));
      expect_same_values(float_values(out), expected, std::string(op_name(op)) + " " + dtype_name(dtype));
    }
  }
}

TEST(RefBinary, FloatComparisonsAndLogic) {
  const std::vector<std::pair<OpKind, std::function<bool(double, double)>>> cases = {
      {OpKind::kEq, [](double a, double b) { return a == b; }},
      {OpKind::kNe, [](double a, double b) { return a != b; }},
      {OpKind::kLt, [](double a, double b) { return a < b; }},
      {OpKind::kLe, [](double a, double b) { return a <= b; }},
      {OpKind::kGt, [](double a, double b) { return a > b; }},
      {OpKind::kGe, [](double a, double b) { return a >= b; }},
      {OpKind::kLogicalAnd, [](double a, double b) { return a != 0 && b != 0; }},
      {OpKind::kLogicalOr, [](double a, double b) { return a != 0 || b != 0; }},
  };
  const auto n = static_cast<int64_t>(kLeft.size());
  for (DType dtype : reftest::float_dtypes()) {
    const HostBuffer a = float_buffer(dtype, kLeft);
    const HostBuffer b = float_buffer(dtype, kRight);
    const std::vector<double> x = float_values(a);
    const std::vector<double> y = float_values(b);
    for (const auto& [op, fn] : cases) {
      const HostBuffer out = run_binary(op, a, {n}, b, {n});
      ASSERT_EQ(out.dtype, DType::kBool);
      std::vector<int64_t> expected;
      for (size_t k = 0; k < x.size(); ++k) expected.push_back(fn(x[k], y[k]) ? 1 : 0);
      EXPECT_EQ(int_values(out), expected) << op_name(op) << " " << dtype_name(dtype);
    }
  }
  // NaN compares false with everything except through ne; NaN is "true" for logic.
  const HostBuffer nan = float_buffer(DType::kF32, {kNaN, kNaN, kNaN});
  const HostBuffer other = float_buffer(DType::kF32, {kNaN, 0.0, 1.0});
  EXPECT_EQ(int_values(run_binary(OpKind::kEq, nan, {3}, other, {3})), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kNe, nan, {3}, other, {3})), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kGe, nan, {3}, other, {3})), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLogicalAnd, nan, {3}, other, {3})),
            (std::vector<int64_t>{1, 0, 1}));
}

TEST(RefBinary, FloatMaxMinPropagateNaN) {
  const HostBuffer a = float_buffer(DType::kF16, {kNaN, 1.0, kNaN, -kInf});
  const HostBuffer b = float_buffer(DType::kF16, {1.0, kNaN, kNaN, -1.0});
  expect_same_values(float_values(run_binary(OpKind::kMax, a, {4}, b, {4})), {kNaN, kNaN, kNaN, -1.0}, "max");
  expect_same_values(float_values(run_binary(OpKind::kMin, a, {4}, b, {4})), {kNaN, kNaN, kNaN, -kInf},
                     "min");
}

TEST(RefBinary, IntegerArithmeticWraps) {
  struct Case {
    DType dtype;
    OpKind op;
    std::vector<int64_t> a, b, expected;
  };
  const std::vector<Case> cases = {
      {DType::kI8, OpKind::kAdd, {100, -100, 127, 5}, {100, -100, 1, -7}, {-56, 56, -128, -2}},
      {DType::kI8, OpKind::kSub, {-128, 127, 3}, {1, -1, 5}, {127, -128, -2}},
      {DType::kI8, OpKind::kMul, {16, -128, 11}, {16, -1, 12}, {0, -128, -124}},
      {DType::kI32, OpKind::kAdd, {INT32_MAX, INT32_MIN}, {1, -1}, {INT32_MIN, INT32_MAX}},
      {DType::kI32, OpKind::kMul, {65536, 46341}, {65536, 46341}, {0, -2147479015}},
      {DType::kI64, OpKind::kAdd, {INT64_MAX, INT64_MIN}, {1, -1}, {INT64_MIN, INT64_MAX}},
      {DType::kI64, OpKind::kSub, {INT64_MIN}, {1}, {INT64_MAX}},
      {DType::kI64, OpKind::kMul, {INT64_C(1) << 62, INT64_MAX}, {4, 2}, {0, -2}},
      {DType::kU8, OpKind::kAdd, {200, 255}, {100, 1}, {44, 0}},
      {DType::kU8, OpKind::kSub, {0, 5}, {1, 10}, {255, 251}},
      {DType::kU8, OpKind::kMul, {16, 255}, {16, 255}, {0, 1}},
  };
  for (const Case& c : cases) {
    const auto n = static_cast<int64_t>(c.a.size());
    EXPECT_EQ(int_values(run_binary(c.op, int_buffer(c.dtype, c.a), {n}, int_buffer(c.dtype, c.b), {n})),
              c.expected)
        << op_name(c.op) << " " << dtype_name(c.dtype);
  }
}

TEST(RefBinary, IntegerDivisionTruncatesAndNeverTraps) {
  const std::vector<int64_t> a = {7, -7, 7, -7, 5, -5, 0, 1};
  const std::vector<int64_t> b = {2, 2, -2, -2, 0, 0, 0, 3};
  const std::vector<int64_t> expected = {3, -3, -3, 3, 0, 0, 0, 0};
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64}) {
    EXPECT_EQ(int_values(run_binary(OpKind::kDiv, int_buffer(dtype, a), {8}, int_buffer(dtype, b), {8})),
              expected)
        << dtype_name(dtype);
  }
  // The most negative value / -1 wraps to itself.
  EXPECT_EQ(int_values(run_binary(OpKind::kDiv, int_buffer(DType::kI8, {-128, -128}), {2},
                                  int_buffer(DType::kI8, {-1, 1}), {2})),
            (std::vector<int64_t>{-128, -128}));
  EXPECT_EQ(int_values(run_binary(OpKind::kDiv, int_buffer(DType::kI32, {INT32_MIN, INT32_MIN}), {2},
                                  int_buffer(DType::kI32, {-1, 2}), {2})),
            (std::vector<int64_t>{INT32_MIN, INT32_MIN / 2}));
  EXPECT_EQ(int_values(run_binary(OpKind::kDiv, int_buffer(DType::kI64, {INT64_MIN, INT64_MIN, INT64_MAX}),
                                  {3}, int_buffer(DType::kI64, {-1, 0, -1}), {3})),
            (std::vector<int64_t>{INT64_MIN, 0, -INT64_MAX}));
  EXPECT_EQ(int_values(run_binary(OpKind::kDiv, int_buffer(DType::kU8, {255, 255, 9}), {3},
                                  int_buffer(DType::kU8, {2, 0, 255}), {3})),
            (std::vector<int64_t>{127, 0, 0}));
}

TEST(RefBinary, IntegerComparisonsMaxMin) {
  const std::vector<int64_t> a = {-128, 5, 7, 127, 0};
  const std::vector<int64_t> b = {127, 5, -7, -128, 0};
  const HostBuffer x = int_buffer(DType::kI8, a);
  const HostBuffer y = int_buffer(DType::kI8, b);
  EXPECT_EQ(int_values(run_binary(OpKind::kMax, x, {5}, y, {5})), (std::vector<int64_t>{127, 5, 7, 127, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kMin, x, {5}, y, {5})),
            (std::vector<int64_t>{-128, 5, -7, -128, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLt, x, {5}, y, {5})), (std::vector<int64_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLe, x, {5}, y, {5})), (std::vector<int64_t>{1, 1, 0, 0, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kGt, x, {5}, y, {5})), (std::vector<int64_t>{0, 0, 1, 1, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kGe, x, {5}, y, {5})), (std::vector<int64_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kEq, x, {5}, y, {5})), (std::vector<int64_t>{0, 1, 0, 0, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kNe, x, {5}, y, {5})), (std::vector<int64_t>{1, 0, 1, 1, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLogicalAnd, x, {5}, y, {5})),
            (std::vector<int64_t>{1, 1, 1, 1, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLogicalOr, x, {5}, y, {5})),
            (std::vector<int64_t>{1, 1, 1, 1, 0}));
  // u8 compares as unsigned.
  EXPECT_EQ(int_values(run_binary(OpKind::kLt, int_buffer(DType::kU8, {200, 1}), {2},
                                  int_buffer(DType::kU8, {100, 2}), {2})),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kMax, int_buffer(DType::kI64, {INT64_MIN, 3}), {2},
                                  int_buffer(DType::kI64, {INT64_MAX, -3}), {2})),
            (std::vector<int64_t>{INT64_MAX, 3}));
  EXPECT_EQ(int_values(run_binary(OpKind::kMin, int_buffer(DType::kI32, {INT32_MIN, 3}), {2},
                                  int_buffer(DType::kI32, {INT32_MAX, -3}), {2})),
            (std::vector<int64_t>{INT32_MIN, -3}));
}

TEST(RefBinary, BoolOperandsWithAnyNonzeroByte) {
  // Bytes 2 and 0xFF are true; results are 0 or 1.
  const HostBuffer a = int_buffer(DType::kBool, {0, 0, 2, 0xFF, 1, 2});
  const HostBuffer b = int_buffer(DType::kBool, {0, 7, 0, 1, 0xFF, 1});
  EXPECT_EQ(int_values(run_binary(OpKind::kMax, a, {6}, b, {6})), (std::vector<int64_t>{0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kMin, a, {6}, b, {6})), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kEq, a, {6}, b, {6})), (std::vector<int64_t>{1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kNe, a, {6}, b, {6})), (std::vector<int64_t>{0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLt, a, {6}, b, {6})), (std::vector<int64_t>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLogicalAnd, a, {6}, b, {6})),
            (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(int_values(run_binary(OpKind::kLogicalOr, a, {6}, b, {6})),
            (std::vector<int64_t>{0, 1, 1, 1, 1, 1}));
}

TEST(RefBinary, BroadcastOperands) {
  // [2,1] + [1,3] -> [2,3]: size-1 dims stretch on both sides.
  const HostBuffer col = float_buffer(DType::kF32, {10.0, 20.0});
  const HostBuffer row = float_buffer(DType::kF32, {1.0, 2.0, 3.0});
  expect_same_values(float_values(run_binary(OpKind::kAdd, col, {2, 1}, row, {1, 3})),
                     {11.0, 12.0, 13.0, 21.0, 22.0, 23.0}, "[2,1]+[1,3]");
  // [3] - [2,3]: the rank grows on the left operand.
  const HostBuffer mat = float_buffer(DType::kF32, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
  expect_same_values(float_values(run_binary(OpKind::kSub, row, {3}, mat, {2, 3})),
                     {0.0, 0.0, 0.0, -3.0, -3.0, -3.0}, "[3]-[2,3]");
  // A scalar against a [2,2] i32.
  EXPECT_EQ(int_values(run_binary(OpKind::kMul, int_buffer(DType::kI32, {1, 2, 3, 4}), {2, 2},
                                  int_buffer(DType::kI32, {-3}), {})),
            (std::vector<int64_t>{-3, -6, -9, -12}));
  // [4,1,3] with [2,1] -> [4,2,3].
  std::vector<int64_t> big(12);
  for (int64_t k = 0; k < 12; ++k) big[static_cast<size_t>(k)] = k;
  const HostBuffer out = run_binary(OpKind::kAdd, int_buffer(DType::kI64, big), {4, 1, 3},
                                    int_buffer(DType::kI64, {100, 200}), {2, 1});
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t k = 0; k < 3; ++k) expected.push_back(i * 3 + k + (j + 1) * 100);
    }
  }
  EXPECT_EQ(int_values(out), expected);
}

TEST(RefSelect, BroadcastsAllThree) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
    Graph g;
    ValueId cond = build_input(g, "c", DType::kBool, {2, 1});
    ValueId a = build_input(g, "a", dtype, {3});
    ValueId b = build_input(g, "b", dtype, {});
    build_output(g, "y", build_select(g, cond, a, b));
    const auto out = evaluate(g, {int_buffer(DType::kBool, {0, 2}), float_buffer(dtype, {1.0, kNaN, -3.0}),
                                  float_buffer(dtype, {0.5})});
    expect_same_values(float_values(out[0]), {0.5, 0.5, 0.5, 1.0, kNaN, -3.0}, dtype_name(dtype));
  }
  Graph g;
  ValueId cond = build_input(g, "c", DType::kBool, {4});
  ValueId a = build_input(g, "a", DType::kU8, {4});
  ValueId b = build_input(g, "b", DType::kU8, {4});
  build_output(g, "y", build_select(g, cond, a, b));
  const auto out =
      evaluate(g, {int_buffer(DType::kBool, {1, 0, 0xFF, 0}), int_buffer(DType::kU8, {1, 2, 3, 4}),
                   int_buffer(DType::kU8, {250, 251, 252, 253})});
  EXPECT_EQ(int_values(out[0]), (std::vector<int64_t>{1, 251, 3, 253}));
}

TEST(RefCast, FloatToIntegerTruncatesAndSaturates) {
  const HostBuffer f32 =
      float_buffer(DType::kF32, {3.9, -3.9, 1000.0, -1000.0, kNaN, kInf, -kInf, -0.5, 127.99});
  EXPECT_EQ(int_values(run_cast(f32, 9, DType::kI8)),
            (std::vector<int64_t>{3, -3, 127, -128, 0, 127, -128, 0, 127}));
  EXPECT_EQ(int_values(run_cast(f32, 9, DType::kU8)),
            (std::vector<int64_t>{3, 0, 255, 0, 0, 255, 0, 0, 127}));
  EXPECT_EQ(int_values(run_cast(f32, 9, DType::kI32)),
            (std::vector<int64_t>{3, -3, 1000, -1000, 0, INT32_MAX, INT32_MIN, 0, 127}));
  const HostBuffer f64 =
      float_buffer(DType::kF64, {1e19, -1e19, std::ldexp(1.0, 63), -std::ldexp(1.0, 63), 2.5e9});
  EXPECT_EQ(int_values(run_cast(f64, 5, DType::kI64)),
            (std::vector<int64_t>{INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 2500000000}));
  EXPECT_EQ(int_values(run_cast(f64, 5, DType::kI32)),
            (std::vector<int64_t>{INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX}));
  const HostBuffer bf16 = float_buffer(DType::kBF16, {300.0, -2.75});
  EXPECT_EQ(int_values(run_cast(bf16, 2, DType::kI8)), (std::vector<int64_t>{127, -2}));
}

TEST(RefCast, IntegerToIntegerWraps) {
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kI32, {300, -129, 128, -1}), 4, DType::kI8)),
            (std::vector<int64_t>{44, 127, -128, -1}));
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kI64, {-1, 256, INT64_C(0x1234567890)}), 3, DType::kU8)),
            (std::vector<int64_t>{255, 0, 0x90}));
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kI64, {INT64_C(0x1234567890), INT64_MIN}), 2, DType::kI32)),
            (std::vector<int64_t>{0x34567890, 0}));
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kU8, {255, 128}), 2, DType::kI8)),
            (std::vector<int64_t>{-1, -128}));
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kI8, {-1, -128}), 2, DType::kI64)),
            (std::vector<int64_t>{-1, -128}));
}

TEST(RefCast, ToAndFromBool) {
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kI32, {0, 5, -1}), 3, DType::kBool)),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(int_values(run_cast(float_buffer(DType::kF32, {kNaN, -0.0, 0.5, 1e-30}), 4, DType::kBool)),
            (std::vector<int64_t>{1, 0, 1, 1}));
  // Bool bytes other than 0/1 read as true, i.e. 1.
  EXPECT_EQ(int_values(run_cast(int_buffer(DType::kBool, {0, 2, 0xFF}), 3, DType::kI32)),
            (std::vector<int64_t>{0, 1, 1}));
  expect_same_values(float_values(run_cast(int_buffer(DType::kBool, {0, 0x80}), 2, DType::kF16)), {0.0, 1.0},
                     "bool->f16");
}

TEST(RefCast, ToFloatRoundsToNearestEven) {
  // int -> f16: 2049 is a tie between 2048 and 2050 (even: 2048); 2051 -> 2052.
  EXPECT_EQ(reftest::raw_values<uint16_t>(
                run_cast(int_buffer(DType::kI32, {2049, 2051, 65520, -65519}), 4, DType::kF16)),
            (std::vector<uint16_t>{0x6800, 0x6802, 0x7C00, 0xFBFF}));
  // int64 -> f32 rounds once: 2^24 + 1 -> 2^24.
  expect_same_values(float_values(run_cast(int_buffer(DType::kI64, {16777217, 16777219}), 2, DType::kF32)),
                     {16777216.0, 16777220.0}, "i64->f32");
  // f64 -> f32 -> f16 / bf16.
  EXPECT_EQ(reftest::raw_values<uint16_t>(run_cast(float_buffer(DType::kF64, {1.0 / 3.0}), 1, DType::kF16)),
            (std::vector<uint16_t>{0x3555}));
  EXPECT_EQ(reftest::raw_values<uint16_t>(run_cast(float_buffer(DType::kF32, {1.0 / 3.0}), 1, DType::kBF16)),
            (std::vector<uint16_t>{0x3EAB}));
  // f16 -> f32 and bf16 -> f64 are exact.
  expect_same_values(
      float_values(run_cast(reftest::raw_buffer(DType::kF16, std::vector<uint16_t>{0x3555, 0x0001, 0xFC00}),
                            3, DType::kF32)),
      {reftest::f16_value(0x3555), std::ldexp(1.0, -24), -kInf}, "f16->f32");
  expect_same_values(
      float_values(
          run_cast(reftest::raw_buffer(DType::kBF16, std::vector<uint16_t>{0x3EAB, 0x8000}), 2, DType::kF64)),
      {reftest::bf16_value(0x3EAB), -0.0}, "bf16->f64");
  expect_same_values(float_values(run_cast(int_buffer(DType::kU8, {255, 0}), 2, DType::kF32)), {255.0, 0.0},
                     "u8->f32");
}

}  // namespace
}  // namespace fstitch
