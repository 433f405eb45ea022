// Reference evaluator: graph-level behaviour (inputs and outputs, opaque operations, bad
// arguments, malformed graphs, threads, speed) and f16/bf16 rounding of computed values.
#include "ref/evaluator.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/error_of.hpp"
#include "ref/ref_test_util.hpp"
#include "support/error.hpp"

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
using reftest::raw_buffer;
using reftest::raw_values;

using testing::error_of;

TEST(RefEvaluator, InputsAndOutputsInDeclarationOrder) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kI32, {2});
  ValueId b = build_input(g, "b", DType::kF64, {2});
  build_output(g, "b_again", b);  // an input may be an output
  ValueId diff = build_binary(g, OpKind::kSub, build_cast(g, a, DType::kF64), b);
  build_output(g, "diff", diff);
  build_output(g, "diff_twice", diff);  // one value, two outputs
  const auto out = evaluate(g, {int_buffer(DType::kI32, {10, 20}), float_buffer(DType::kF64, {0.5, -1.0})});
  ASSERT_EQ(out.size(), 3u);
  expect_same_values(float_values(out[0]), {0.5, -1.0}, "b_again");
  expect_same_values(float_values(out[1]), {9.5, 21.0}, "diff");
  expect_same_values(float_values(out[2]), {9.5, 21.0}, "diff_twice");
}

TEST(RefEvaluator, BoolInputIsNormalized) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBool, {4});
  build_output(g, "x", x);
  EXPECT_EQ(raw_values<uint8_t>(evaluate(g, {int_buffer(DType::kBool, {0, 1, 2, 0xFF})})[0]),
            (std::vector<uint8_t>{0, 1, 1, 1}));
}

TEST(RefEvaluator, OutputMayAliasAnInput) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {3});
  ValueId y = build_binary(g, OpKind::kMul, x, x);
  build_output(g, "y", build_binary(g, OpKind::kAdd, y, x));
  std::vector<float> data = {1.0f, 2.0f, -3.0f};
  evaluate_reference(g, {data.data()}, {data.data()});
  EXPECT_EQ(data, (std::vector<float>{2.0f, 6.0f, 6.0f}));
}

TEST(RefEvaluator, UnusedValuesAreSkipped) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {2});
  build_unary(g, OpKind::kLog, x);  // feeds no output
  build_output(g, "y", build_unary(g, OpKind::kNeg, x));
  expect_same_values(float_values(evaluate(g, {float_buffer(DType::kF64, {1.0, 2.0})})[0]), {-1.0, -2.0},
                     "y");
}

TEST(RefEvaluator, OpaqueOperationIsUnsupported) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {2, 3});
  ValueId b = build_input(g, "b", DType::kF32, {3, 4});
  ValueId mm = build_opaque(g, "matmul", {a, b}, DType::kF32, {2, 4});
  build_output(g, "y", build_unary(g, OpKind::kRelu, mm));
  std::vector<float> in_a(6, 1.0f), in_b(12, 1.0f), out(8, 0.0f);
  const Error e = error_of([&] { evaluate_reference(g, {in_a.data(), in_b.data()}, {out.data()}); });
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  const std::string message = e.what();
  EXPECT_NE(message.find("cannot run opaque operation \"matmul\" (%2)"), std::string::npos) << message;
  EXPECT_EQ(out, std::vector<float>(8, 0.0f));  // nothing written
}

TEST(RefEvaluator, OpaqueOperationNotFeedingAnOutputIsStillUnsupported) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {2});
  build_opaque(g, "side_effect.v2", {a}, DType::kF32, {2});
  build_output(g, "a", a);
  std::vector<float> in(2, 1.0f), out(2, 0.0f);
  EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
            StatusCode::kUnsupported);
}

TEST(RefEvaluator, BufferCountsAndNullsAreInvalidArguments) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {2});
  build_output(g, "a", a);
  std::vector<float> buf(2, 0.0f);
  EXPECT_EQ(error_of([&] { evaluate_reference(g, {}, {buf.data()}); }).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { evaluate_reference(g, {buf.data()}, {}); }).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { evaluate_reference(g, {nullptr}, {buf.data()}); }).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { evaluate_reference(g, {buf.data()}, {nullptr}); }).code(),
            StatusCode::kInvalidArgument);
}

// Graphs assembled without the builders can break invariants; the evaluator reports an
// internal error instead of reading out of bounds.
TEST(RefEvaluator, MalformedGraphsAreInternalErrors) {
  std::vector<double> in(6, 1.0), out(6, 0.0);
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF64, {6});
    Node bad;
    bad.op = OpKind::kAdd;
    bad.operands = {x, x};
    bad.dtype = DType::kF64;
    bad.dims = {2, 3};  // the operands are [6]
    build_output(g, "y", g.append(bad));
    EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
              StatusCode::kInternal);
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF64, {6});
    Node bad;
    bad.op = OpKind::kNeg;
    bad.operands = {x + 1};  // itself: not defined before use
    bad.dtype = DType::kF64;
    bad.dims = {6};
    build_output(g, "y", g.append(bad));
    EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
              StatusCode::kInternal);
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF64, {6});
    Node bad;
    bad.op = OpKind::kBroadcast;
    bad.operands = {x};
    bad.dtype = DType::kF64;
    bad.dims = {4};  // [6] does not broadcast to [4]
    build_output(g, "y", g.append(bad));
    EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
              StatusCode::kInternal);
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF64, {6});
    Node bad;
    bad.op = OpKind::kExp;
    bad.operands = {build_cast(g, x, DType::kI32)};  // exp of an integer
    bad.dtype = DType::kI32;
    bad.dims = {6};
    build_output(g, "y", g.append(bad));
    EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
              StatusCode::kInternal);
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF64, {2, 3});
    Node bad;
    bad.op = OpKind::kReduceSum;
    bad.operands = {x};
    bad.axes = {1, 0};  // not sorted
    bad.dtype = DType::kF64;
    bad.dims = {};
    build_output(g, "y", g.append(bad));
    EXPECT_EQ(error_of([&] { evaluate_reference(g, {in.data()}, {out.data()}); }).code(),
              StatusCode::kInternal);
  }
}

TEST(RefEvaluator, F16ArithmeticRoundsOnceFromF64) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF16, {4});
  ValueId b = build_input(g, "b", DType::kF16, {4});
  build_output(g, "sum", build_binary(g, OpKind::kAdd, a, b));
  build_output(g, "prod", build_binary(g, OpKind::kMul, a, b));
  // 2048 + 1 = 2049 is a tie -> 2048; 2048 + 3 = 2051 -> 2052; 65504 + 16 = 65520 -> inf;
  // 65504 + 15 = 65519 -> 65504. Products: 2048, 6144, inf, 982560 -> inf.
  const auto out =
      evaluate(g, {raw_buffer(DType::kF16, std::vector<uint16_t>{0x6800, 0x6800, 0x7BFF, 0x7BFF}),
                   float_buffer(DType::kF16, {1.0, 3.0, 16.0, 15.0})});
  EXPECT_EQ(raw_values<uint16_t>(out[0]), (std::vector<uint16_t>{0x6800, 0x6802, 0x7C00, 0x7BFF}));
  EXPECT_EQ(raw_values<uint16_t>(out[1]), (std::vector<uint16_t>{0x6800, 0x6E00, 0x7C00, 0x7C00}));
}

TEST(RefEvaluator, F16AndBF16RoundingOfComputedValues) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {14});
  build_output(g, "f16", build_cast(g, x, DType::kF16));
  build_output(g, "bf16", build_cast(g, x, DType::kBF16));
  const double tie16 = 1.0 + std::ldexp(1.0, -11);
  const std::vector<double> values = {
      1.0 / 3.0,                          // f16 0x3555, bf16 0x3EAB
      65504.0,                            // f16 max
      65519.99,                           // f16 -> 65504
      65520.0,                            // f16 -> inf
      std::ldexp(1.0, -24),               // f16 smallest subnormal
      std::ldexp(1.0, -25),               // half of it: tie to even, 0
      std::ldexp(1.0, -25) * (1 + 1e-6),  // just above half: smallest subnormal
      tie16 + std::ldexp(1.0, -40),       // just above an f16 tie (f32 cannot see it)
      1.0 + std::ldexp(1.0, -8),          // bf16 tie -> 1.0
      1.0 + 3 * std::ldexp(1.0, -8),      // bf16 tie -> 1 + 2^-6
      kNaN,
      -0.0,
      -kInf,
      -std::ldexp(1.0, -25),  // -0 after rounding
  };
  const auto out = evaluate(g, {float_buffer(DType::kF64, values)});
  const std::vector<uint16_t> f16 = raw_values<uint16_t>(out[0]);
  const std::vector<uint16_t> bf16 = raw_values<uint16_t>(out[1]);
  EXPECT_EQ(f16[0], 0x3555);
  EXPECT_EQ(bf16[0], 0x3EAB);
  EXPECT_EQ(f16[1], 0x7BFF);
  EXPECT_EQ(f16[2], 0x7BFF);
  EXPECT_EQ(f16[3], 0x7C00);
  EXPECT_EQ(f16[4], 0x0001);
  EXPECT_EQ(f16[5], 0x0000);
  EXPECT_EQ(f16[6], 0x0001);
  EXPECT_EQ(f16[7], 0x3C01);
  EXPECT_EQ(f16[8], 0x3C04);  // 1 + 2^-8 is exact in f16
  EXPECT_EQ(bf16[8], 0x3F80);
  EXPECT_EQ(bf16[9], 0x3F82);
  EXPECT_EQ(f16[10] & 0x7C00, 0x7C00);
  EXPECT_NE(f16[10] & 0x03FF, 0);
  EXPECT_EQ(bf16[10] & 0x7F80, 0x7F80);
  EXPECT_NE(bf16[10] & 0x007F, 0);
  EXPECT_EQ(f16[11], 0x8000);
  EXPECT_EQ(bf16[11], 0x8000);
  EXPECT_EQ(f16[12], 0xFC00);
  EXPECT_EQ(bf16[12], 0xFF80);
  EXPECT_EQ(f16[13], 0x8000);
}

TEST(RefEvaluator, ConcurrentEvaluationsOfOneGraph) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {64, 33});
  ValueId m = build_reduce(g, OpKind::kReduceMax, x, {1}, true);
  ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, m));
  ValueId s = build_reduce(g, OpKind::kReduceSum, e, {1}, true);
  build_output(g, "softmax", build_binary(g, OpKind::kDiv, e, s));
  std::vector<double> values;
  for (int k = 0; k < 64 * 33; ++k) values.push_back(std::sin(k * 0.37) * 5);
  const HostBuffer in = float_buffer(DType::kF32, values);
  const std::vector<double> expected = float_values(evaluate(g, {in})[0]);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 10; ++rep) {
        if (float_values(evaluate(g, {in})[0]) != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  // Each row of the softmax sums to about 1.
  for (int r = 0; r < 64; ++r) {
    double sum = 0;
    for (int c = 0; c < 33; ++c) sum += expected[static_cast<size_t>(r * 33 + c)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(RefEvaluator, MillionElementGraph) {
  const int64_t n = 1 << 20;
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {1024, 1024});
  ValueId b = build_input(g, "b", DType::kF32, {1024});
  ValueId y = build_binary(g, OpKind::kMul, build_binary(g, OpKind::kAdd, x, b), x);
  build_output(g, "y", build_unary(g, OpKind::kRelu, y));
  std::vector<float> xs(static_cast<size_t>(n)), bs(1024),
      out(static_cast<size_t>(n), static_cast<float>(kNaN));
  for (size_t k = 0; k < xs.size(); ++k) xs[k] = static_cast<float>(static_cast<int64_t>(k % 17) - 8);
  for (size_t k = 0; k < bs.size(); ++k) bs[k] = static_cast<float>(k % 5);
  evaluate_reference(g, {xs.data(), bs.data()}, {out.data()});
  for (size_t k = 0; k < xs.size(); k += 4099) {
    const double v = (static_cast<double>(xs[k]) + bs[k % 1024]) * xs[k];
    EXPECT_EQ(out[k], static_cast<float>(v > 0 ? v : 0.0)) << k;
  }
}

}  // namespace
}  // namespace fstitch
