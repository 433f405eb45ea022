// The graph text format: exact printed text, round trips of every operation and dtype,
// parse errors with their positions, and mutated input that must fail cleanly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<DType> all_dtypes() {
  std::vector<DType> dtypes;
  for (int i = kFirstDType; i <= kLastDType; ++i) dtypes.push_back(static_cast<DType>(i));
  return dtypes;
}

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  return std::memcmp(&a, &b, sizeof a) == 0;  // tells -0.0 from 0.0
}

// Field-by-field comparison, independent of the printer.
void expect_same_graph(const Graph& expected, const Graph& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("value %" + std::to_string(i));
    const Node& a = expected.node(static_cast<ValueId>(i));
    const Node& b = actual.node(static_cast<ValueId>(i));
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.operands, b.operands);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.dims, b.dims);
    EXPECT_EQ(a.axes, b.axes);
    EXPECT_EQ(a.keepdims, b.keepdims);
    EXPECT_EQ(a.axis, b.axis);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.starts, b.starts);
    EXPECT_EQ(a.stops, b.stops);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.pad_low, b.pad_low);
    EXPECT_EQ(a.pad_high, b.pad_high);
    if (a.op == OpKind::kConstant || a.op == OpKind::kPad) {
      if (is_float(a.dtype)) {
        EXPECT_TRUE(same_double(a.value.f, b.value.f)) << a.value.f << " vs " << b.value.f;
      } else {
        EXPECT_EQ(a.value.i, b.value.i);
      }
    }
  }
  EXPECT_EQ(expected.inputs(), actual.inputs());
  ASSERT_EQ(expected.outputs().size(), actual.outputs().size());
  for (size_t i = 0; i < expected.outputs().size(); ++i) {
    EXPECT_EQ(expected.outputs()[i].name, actual.outputs()[i].name);
    EXPECT_EQ(expected.outputs()[i].value, actual.outputs()[i].value);
  }
}

// print -> parse gives the same graph, and printing that gives the same text.
void expect_round_trip(const Graph& graph) {
  const std::string text = print_graph(graph);
  SCOPED_TRACE(text);
  Graph parsed;
  try {
    parsed = parse_graph(text);
  } catch (const Error& e) {
    FAIL() << "parse failed: " << e.what();
  }
  expect_same_graph(graph, parsed);
  EXPECT_EQ(print_graph(parsed), text);
  if (!parsed.outputs().empty()) {
    EXPECT_NO_THROW(verify_graph(parsed));
  }
}

// Asserts that parsing fails with `code` and a message that starts with `position` and
// contains `detail`.
void expect_error(const std::string& text, StatusCode code, const std::string& position,
                  const std::string& detail) {
  SCOPED_TRACE(text);
  try {
    parse_graph(text);
    ADD_FAILURE() << "parse succeeded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), code) << message;
    EXPECT_EQ(message.rfind(position, 0), 0u) << message;
    EXPECT_NE(message.find(detail), std::string::npos) << message;
  }
}

const std::string kHeader = "fstitch.graph 1\n";

// ---------------------------------------------------------------------------------------
// Exact text.

TEST(TextPrint, GoldenText) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {2, 3});
  ValueId w = build_input(g, "w", DType::kF32, {3});
  ValueId eps = build_constant_f64(g, DType::kF32, 1e-5);
  ValueId sq = build_binary(g, OpKind::kMul, x, x);
  ValueId ms = build_reduce(g, OpKind::kReduceMean, sq, {-1}, true);
  ValueId r = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, ms, eps));
  ValueId y = build_binary(g, OpKind::kMul, build_binary(g, OpKind::kMul, x, r), w);
  ValueId t = build_reshape(g, build_permute(g, build_cast(g, y, DType::kBF16), {1, 0}), {6});
  ValueId i = build_iota(g, DType::kI32, {6}, 0);
  ValueId big = build_binary(g, OpKind::kGt, i, build_constant_i64(g, DType::kI32, 3));
  ValueId zero = build_constant_f64(g, DType::kBF16, -0.0);
  ValueId s = build_select(g, big, t, zero);
  ValueId m = build_opaque(g, "matmul", {x, w}, DType::kF32, {2, 2});
  build_output(g, "y", y);
  build_output(g, "s", s);
  build_output(g, "m", m);
  build_output(g, "x again", x);

  const std::string expected =
      "fstitch.graph 1\n"
      "%0 = input \"x\" : f32[2,3]\n"
      "%1 = input \"w\" : f32[3]\n"
      "%2 = constant 9.9999997473787516e-06 : f32\n"
      "%3 = mul %0, %0 : f32[2,3]\n"
      "%4 = reduce_mean %3 axes=[1] keepdims=true : f32[2,1]\n"
      "%5 = broadcast %2 : f32[2,1]\n"
      "%6 = add %4, %5 : f32[2,1]\n"
      "%7 = rsqrt %6 : f32[2,1]\n"
      "%8 = broadcast %7 : f32[2,3]\n"
      "%9 = mul %0, %8 : f32[2,3]\n"
      "%10 = broadcast %1 : f32[2,3]\n"
      "%11 = mul %9, %10 : f32[2,3]\n"
      "%12 = cast %11 : bf16[2,3]\n"
      "%13 = permute %12 perm=[1,0] : bf16[3,2]\n"
      "%14 = reshape %13 : bf16[6]\n"
      "%15 = iota axis=0 : i32[6]\n"
      "%16 = constant 3 : i32\n"
      "%17 = broadcast %16 : i32[6]\n"
      "%18 = gt %15, %17 : bool[6]\n"
      "%19 = constant -0 : bf16\n"
      "%20 = broadcast %19 : bf16[6]\n"
      "%21 = select %18, %14, %20 : bf16[6]\n"
      "%22 = opaque \"matmul\" (%0, %1) : f32[2,2]\n"
      "output \"y\" = %11\n"
      "output \"s\" = %21\n"
      "output \"m\" = %22\n"
      "output \"x again\" = %0\n";
  EXPECT_EQ(print_graph(g), expected);
  expect_round_trip(g);
}

// The example in docs/text-format.md is printed text: it reads back and prints the same.
TEST(TextPrint, DocumentedExampleIsPrintedText) {
  const std::string example =
      "fstitch.graph 1\n"
      "%0 = input \"x\" : f32[8,16]\n"
      "%1 = input \"w\" : f32[16]\n"
      "%2 = constant 9.9999999747524271e-07 : f32\n"
      "%3 = mul %0, %0 : f32[8,16]\n"
      "%4 = reduce_mean %3 axes=[1] keepdims=true : f32[8,1]\n"
      "%5 = broadcast %2 : f32[8,1]\n"
      "%6 = add %4, %5 : f32[8,1]\n"
      "%7 = rsqrt %6 : f32[8,1]\n"
      "%8 = broadcast %7 : f32[8,16]\n"
      "%9 = mul %0, %8 : f32[8,16]\n"
      "%10 = broadcast %1 : f32[8,16]\n"
      "%11 = mul %9, %10 : f32[8,16]\n"
      "%12 = cast %11 : bf16[8,16]\n"
      "output \"y\" = %12\n";
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {8, 16});
  ValueId w = build_input(g, "w", DType::kF32, {16});
  ValueId eps = build_constant_f64(g, DType::kF32, 1e-6);
  ValueId ms = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, x, x), {1}, true);
  ValueId r = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, ms, eps));
  ValueId y = build_binary(g, OpKind::kMul, build_binary(g, OpKind::kMul, x, r), w);
  build_output(g, "y", build_cast(g, y, DType::kBF16));
  EXPECT_EQ(print_graph(g), example);
  EXPECT_EQ(print_graph(parse_graph(example)), example);
}

TEST(TextPrint, EmptyGraphIsTheHeaderAlone) {
  EXPECT_EQ(print_graph(Graph()), kHeader);
  EXPECT_EQ(parse_graph(kHeader).size(), 0u);
}

TEST(TextPrint, OpaqueWithoutOperandsAndScalarInput) {
  Graph g;
  build_output(g, "r", build_opaque(g, "rng.uniform-v2", {}, DType::kU8, {4}));
  build_input(g, "s", DType::kF64, {});
  EXPECT_EQ(print_graph(g), kHeader +
                                "%0 = opaque \"rng.uniform-v2\" () : u8[4]\n"
                                "%1 = input \"s\" : f64\n"
                                "output \"r\" = %0\n");
  expect_round_trip(g);
}

// ---------------------------------------------------------------------------------------
// Parsing hand-written text.

TEST(TextParse, HandWrittenTextWithNamesCommentsAndSpacing) {
  const std::string text =
      "# an RMSNorm-like graph\n"
      "\n"
      "  fstitch.graph   1   # version\n"
      "%x = input \"x\" : f32[8,16]\r\n"
      "%eps=constant 1e-5:f32[]\n"
      "%sq = mul %x,%x : f32[8,16]\n"
      "\t%ms = reduce_mean %sq keepdims=true axes=[-1] : f32[8,1]   # attributes in any order\n"
      "%b.1 = broadcast %ms : f32[8,16]\n"
      "%flat = reshape %b.1 : f32[128]\n"
      "%t = permute %x perm=[1,0] : f32[16,8]\n"
      "%i = iota axis=1 : i32[4,5]\n"
      "%h = cast %x : f16[8,16]\n"
      "%c = constant true : bool\n"
      "%cb = broadcast %c : bool[8,16]\n"
      "%s = select %cb, %x, %sq : f32[8,16]\n"
      "%m = opaque \"matmul\" (%x, %t) : f32[8,8]\n"
      "output \"y\" = %flat\n"
      "output \"s\" = %s\n";
  Graph g = parse_graph(text);
  ASSERT_EQ(g.size(), 13u);
  EXPECT_EQ(g.node(0).op, OpKind::kInput);
  EXPECT_EQ(g.node(0).name, "x");
  EXPECT_EQ(g.node(1).op, OpKind::kConstant);
  EXPECT_EQ(g.node(1).dims, Dims{});
  EXPECT_EQ(g.node(1).value.f, static_cast<double>(1e-5f));
  EXPECT_EQ(g.node(3).op, OpKind::kReduceMean);
  EXPECT_EQ(g.node(3).axes, (std::vector<int64_t>{1}));
  EXPECT_TRUE(g.node(3).keepdims);
  EXPECT_EQ(g.node(4).operands, (std::vector<ValueId>{3}));
  EXPECT_EQ(g.node(6).axes, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(g.node(7).axis, 1);
  EXPECT_EQ(g.node(7).dtype, DType::kI32);
  EXPECT_EQ(g.node(8).dtype, DType::kF16);
  EXPECT_EQ(g.node(9).value.i, 1);
  EXPECT_EQ(g.node(11).operands, (std::vector<ValueId>{10, 0, 2}));
  EXPECT_EQ(g.node(12).name, "matmul");
  EXPECT_EQ(g.node(12).operands, (std::vector<ValueId>{0, 6}));
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.outputs()[0].name, "y");
  EXPECT_EQ(g.outputs()[0].value, 5);
  EXPECT_NO_THROW(verify_graph(g));
  expect_round_trip(g);
}

TEST(TextParse, ImplicitBroadcastInHandWrittenTextAddsNodes) {
  Graph g = parse_graph(kHeader +
                        "%a = input \"a\" : f32[2,3]\n"
                        "%b = input \"b\" : f32[3]\n"
                        "%s = add %a, %b : f32[2,3]\n"
                        "output \"s\" = %s\n");
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.node(2).op, OpKind::kBroadcast);
  EXPECT_EQ(g.node(3).operands, (std::vector<ValueId>{0, 2}));
  EXPECT_EQ(g.outputs()[0].value, 3);
}

TEST(TextParse, BroadcastToTheSameShapeIsKept) {
  // The builder would elide it; the text keeps every node.
  Graph g = parse_graph(kHeader + "%0 = input \"a\" : f32[3]\n%1 = broadcast %0 : f32[3]\n");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.node(1).op, OpKind::kBroadcast);
  expect_round_trip(g);
}

TEST(TextParse, TextWithoutOutputsParses) {
  Graph g = parse_graph(kHeader + "%0 = input \"a\" : f32[3]\n");
  EXPECT_EQ(g.size(), 1u);
  EXPECT_TRUE(g.outputs().empty());
}

TEST(TextParse, NoTrailingNewlineAndCommentAfterHeader) {
  Graph g = parse_graph("fstitch.graph 1 # c\n%0 = input \"#not a comment\" : i8[1]");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g.node(0).name, "#not a comment");
}

TEST(TextParse, ConstantLiteralsAreRoundedToTheDtype) {
  Graph g = parse_graph(kHeader +
                        "%0 = constant 0.1 : f16\n"
                        "%1 = constant 0.1 : bf16\n"
                        "%2 = constant 0.1 : f32\n"
                        "%3 = constant 1e-30 : f16\n"
                        "%4 = constant 1e+300 : f32\n"
                        "%5 = constant 2 : f64\n"
                        "%6 = constant .5 : f64\n"
                        "%7 = constant -9223372036854775808 : i64\n"
                        "%8 = constant 255 : u8\n"
                        "%9 = constant -128 : i8\n"
                        "%10 = constant 5e-324 : f64\n");
  EXPECT_EQ(g.node(0).value.f, 0.0999755859375);
  EXPECT_EQ(g.node(1).value.f, 0.10009765625);
  EXPECT_EQ(g.node(2).value.f, 0.100000001490116119384765625);
  EXPECT_EQ(g.node(3).value.f, 0.0);
  EXPECT_EQ(g.node(4).value.f, kInf);
  EXPECT_EQ(g.node(5).value.f, 2.0);
  EXPECT_EQ(g.node(6).value.f, 0.5);
  EXPECT_EQ(g.node(7).value.i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(g.node(8).value.i, 255);
  EXPECT_EQ(g.node(9).value.i, -128);
  EXPECT_EQ(g.node(10).value.f, std::ldexp(1.0, -1074));
}

// ---------------------------------------------------------------------------------------
// Round trips of every operation and dtype.

TEST(TextRoundTrip, EveryUnaryOpAndAcceptedDtype) {
  int ops = 0;
  for (int k = 0; unary_op_from_index(k); ++k, ++ops) {
    const OpKind op = *unary_op_from_index(k);
    for (DType dtype : all_dtypes()) {
      if (!dtype_accepted(op_dtype_rule(op), dtype)) continue;
      SCOPED_TRACE(std::string(op_name(op)) + " " + dtype_name(dtype));
      Graph g;
      build_output(g, "y", build_unary(g, op, build_input(g, "x", dtype, {2, 3})));
      expect_round_trip(g);
    }
  }
  EXPECT_EQ(ops, 21);
}

TEST(TextRoundTrip, EveryBinaryOpAndAcceptedDtype) {
  int ops = 0;
  for (int k = 0; binary_op_from_index(k); ++k, ++ops) {
    const OpKind op = *binary_op_from_index(k);
    for (DType dtype : all_dtypes()) {
      if (!dtype_accepted(op_dtype_rule(op), dtype)) continue;
      SCOPED_TRACE(std::string(op_name(op)) + " " + dtype_name(dtype));
      Graph g;
      ValueId a = build_input(g, "a", dtype, {4, 1});
      ValueId b = build_input(g, "b", dtype, {3});
      build_output(g, "y", build_binary(g, op, a, b));
      expect_round_trip(g);
    }
  }
  EXPECT_EQ(ops, 15);
}

TEST(TextRoundTrip, EveryReduceOpWithAxesAndKeepdims) {
  int ops = 0;
  for (int k = 0; reduce_op_from_index(k); ++k, ++ops) {
    const OpKind op = *reduce_op_from_index(k);
    for (DType dtype : all_dtypes()) {
      if (!dtype_accepted(op_dtype_rule(op), dtype)) continue;
      for (bool keepdims : {false, true}) {
        for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0}, {2}, {0, 2}, {0, 1, 2}}) {
          SCOPED_TRACE(std::string(op_name(op)) + " " + dtype_name(dtype));
          Graph g;
          build_output(g, "y", build_reduce(g, op, build_input(g, "x", dtype, {2, 3, 4}), axes, keepdims));
          expect_round_trip(g);
        }
      }
    }
  }
  EXPECT_EQ(ops, 5);
}

TEST(TextRoundTrip, CastBetweenEveryPairOfDtypes) {
  for (DType from : all_dtypes()) {
    for (DType to : all_dtypes()) {
      Graph g;
      build_output(g, "y", build_cast(g, build_input(g, "x", from, {5}), to));
      expect_round_trip(g);
    }
  }
}

TEST(TextRoundTrip, LayoutSelectIotaAndOpaqueInEveryDtype) {
  for (DType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    Graph g;
    ValueId x = build_input(g, "x", dtype, {2, 3, 4});
    ValueId c = build_input(g, "c", DType::kBool, {3, 1});
    ValueId p = build_permute(g, x, {2, 0, 1});
    ValueId r = build_reshape(g, p, {4, -1});
    ValueId b = build_broadcast(g, build_reshape(g, x, {2, 1, 12}), {5, 2, 3, 12});
    ValueId s = build_select(g, c, x, build_constant_f64(g, dtype, 1));
    ValueId o = build_opaque(g, "custom_op.v1", {x, c, r}, dtype, {7});
    build_output(g, "r", r);
    build_output(g, "b", b);
    build_output(g, "s", s);
    build_output(g, "o", o);
    if (!is_bool(dtype)) build_output(g, "i", build_iota(g, dtype, {3, 4}, 1));
    expect_round_trip(g);
  }
}

TEST(TextRoundTrip, ConstantsOfEveryDtypeAndSpecialValue) {
  const std::vector<double> floats = {0.0,
                                      -0.0,
                                      1.0,
                                      -2.5,
                                      1e-5,
                                      0.1,
                                      3.141592653589793,
                                      kInf,
                                      -kInf,
                                      kNaN,
                                      -kNaN,
                                      std::ldexp(1.0, -1074),  // f64 smallest denormal
                                      std::ldexp(1.0, -149),   // f32 smallest denormal
                                      std::ldexp(1.0, -24),    // f16 smallest denormal
                                      std::ldexp(1.0, -133),   // bf16 smallest denormal
                                      std::numeric_limits<double>::max(),
                                      65504.0,                // f16 max
                                      3.4028234663852886e38,  // f32 max
                                      1e300};
  Graph g;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    for (double v : floats) build_constant_f64(g, dtype, v);
  }
  const std::vector<int64_t> integers = {0,
                                         1,
                                         -1,
                                         127,
                                         -128,
                                         255,
                                         2147483647,
                                         -2147483647 - 1,
                                         std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64, DType::kU8, DType::kBool}) {
    for (int64_t v : integers) build_constant_i64(g, dtype, v);
  }
  build_output(g, "first", 0);
  expect_round_trip(g);
}

TEST(TextRoundTrip, SpecialConstantsPrintAsDocumented) {
  Graph g;
  build_constant_f64(g, DType::kF64, kInf);
  build_constant_f64(g, DType::kF32, -kInf);
  build_constant_f64(g, DType::kF16, kNaN);
  build_constant_f64(g, DType::kBF16, -kNaN);
  build_constant_f64(g, DType::kF64, std::ldexp(1.0, -1074));
  build_constant_f64(g, DType::kF16, std::ldexp(1.0, -24));
  build_constant_f64(g, DType::kBF16, std::ldexp(1.0, -133));
  build_constant_f64(g, DType::kF16, 0.1);
  build_constant_f64(g, DType::kBF16, 0.1);
  build_constant_f64(g, DType::kF64, 0.1);
  build_constant_i64(g, DType::kI64, std::numeric_limits<int64_t>::min());
  build_constant_i64(g, DType::kI64, std::numeric_limits<int64_t>::max());
  build_constant_i64(g, DType::kBool, 0);
  build_constant_f64(g, DType::kF32, 1e20);
  EXPECT_EQ(print_graph(g), kHeader +
                                "%0 = constant inf : f64\n"
                                "%1 = constant -inf : f32\n"
                                "%2 = constant nan : f16\n"
                                "%3 = constant -nan : bf16\n"
                                "%4 = constant 4.9406564584124654e-324 : f64\n"
                                "%5 = constant 5.9604644775390625e-08 : f16\n"
                                "%6 = constant 9.1835496157991212e-41 : bf16\n"
                                "%7 = constant 0.0999755859375 : f16\n"
                                "%8 = constant 0.10009765625 : bf16\n"
                                "%9 = constant 0.10000000000000001 : f64\n"
                                "%10 = constant -9223372036854775808 : i64\n"
                                "%11 = constant 9223372036854775807 : i64\n"
                                "%12 = constant false : bool\n"
                                "%13 = constant 1.0000000200408773e+20 : f32\n");
  expect_round_trip(g);
}

TEST(TextRoundTrip, RankZeroAndRankEight) {
  Graph g;
  ValueId s = build_input(g, "scalar", DType::kF32, {});
  ValueId n = build_unary(g, OpKind::kNeg, s);
  ValueId big = build_input(g, "big", DType::kF32, {2, 1, 2, 1, 2, 1, 2, 3});
  ValueId sum = build_binary(g, OpKind::kAdd, big, n);
  ValueId red = build_reduce(g, OpKind::kReduceSum, sum, {0, 7}, false);
  ValueId back = build_reshape(g, red, {8});
  ValueId all = build_reduce(g, OpKind::kReduceMax, back, {0}, false);
  build_output(g, "sum", sum);
  build_output(g, "all", all);
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("%0 = input \"scalar\" : f32\n"), std::string::npos);
  EXPECT_NE(text.find("f32[2,1,2,1,2,1,2,3]"), std::string::npos);
  expect_round_trip(g);
}

TEST(TextRoundTrip, InputAsOutputAndOneValueAsTwoOutputs) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI64, {3});
  ValueId y = build_unary(g, OpKind::kAbs, x);
  build_output(g, "x", x);
  build_output(g, "y1", y);
  build_output(g, "y2", y);
  const std::string text = print_graph(g);
  EXPECT_NE(text.find("output \"x\" = %0\noutput \"y1\" = %1\noutput \"y2\" = %1\n"), std::string::npos);
  expect_round_trip(g);
}

TEST(TextRoundTrip, NamesWithEveryAllowedCharacter) {
  std::string name;
  for (char c = 0x20; c < 0x7f; ++c) {
    if (c != '"' && c != '\\') name += c;
  }
  Graph g;
  ValueId x = build_input(g, name, DType::kF32, {1});
  build_output(g, name, x);
  expect_round_trip(g);
}

// ---------------------------------------------------------------------------------------
// Errors: status code and position.

const std::string kX = kHeader + "%0 = input \"x\" : f32[2]\n";  // lines 1-2; errors on line 3

TEST(TextParseErrors, MissingOrWrongHeader) {
  expect_error("", StatusCode::kParse, "line 1, column 1: ", "found end of input");
  expect_error("# only a comment\n\n", StatusCode::kParse, "line 3, column 1: ", "expected the header");
  expect_error("fstitch.grap 1\n", StatusCode::kParse, "line 1, column 1: ", "found 'fstitch.grap'");
  expect_error("%0 = input \"x\" : f32[2]\n", StatusCode::kParse,
               "line 1, column 1: ", "expected the header");
  expect_error("fstitch.graph 2\n", StatusCode::kParse,
               "line 1, column 15: ", "format version 2 is not supported; this library reads version 1");
  expect_error("fstitch.graph\n", StatusCode::kParse, "line 1, column 14: ", "found end of line");
  expect_error("fstitch.graph one\n", StatusCode::kParse, "line 1, column 15: ", "format version");
  expect_error("fstitch.graph 1 1\n", StatusCode::kParse,
               "line 1, column 17: ", "after the end of the statement");
  expect_error(kX + "fstitch.graph 1\n", StatusCode::kParse, "line 3, column 1: ", "only once");
}

TEST(TextParseErrors, UnknownOperationAndDtype) {
  expect_error(kX + "%1 = nope %0 : f32[2]\n", StatusCode::kParse,
               "line 3, column 6: ", "unknown operation 'nope'");
  expect_error(kHeader + "%0 = input \"x\" : f8[2]\n", StatusCode::kParse,
               "line 2, column 18: ", "unknown dtype 'f8'");
  expect_error(kX + "%1 = = %0 : f32[2]\n", StatusCode::kParse,
               "line 3, column 6: ", "expected an operation name");
}

TEST(TextParseErrors, UndefinedAndRedefinedValues) {
  expect_error(kX + "%1 = neg %9 : f32[2]\n", StatusCode::kParse, "line 3, column 10: ", "%9 is not defined");
  expect_error(kX + "%1 = neg %1 : f32[2]\n", StatusCode::kParse, "line 3, column 10: ", "%1 is not defined");
  expect_error(kX + "%0 = neg %0 : f32[2]\n", StatusCode::kParse,
               "line 3, column 1: ", "%0 is already defined on line 2");
  expect_error(kX + "output \"y\" = %7\n", StatusCode::kParse, "line 3, column 14: ", "%7 is not defined");
  expect_error(kX + "%1 = neg % : f32[2]\n", StatusCode::kParse,
               "line 3, column 10: ", "expected a value name");
}

TEST(TextParseErrors, StringsAndStrayCharacters) {
  expect_error(kHeader + "%0 = input \"x : f32[2]\n", StatusCode::kParse,
               "line 2, column 12: ", "unterminated string");
  expect_error(kHeader + "%0 = input \"a\\b\" : f32[2]\n", StatusCode::kParse,
               "line 2, column 14: ", "backslash");
  expect_error(kHeader + "%0 = input \"a\tb\" : f32[2]\n", StatusCode::kParse,
               "line 2, column 14: ", "'\\x09'");
  expect_error(kX + "%1 = neg %0 ; f32[2]\n", StatusCode::kParse,
               "line 3, column 13: ", "unexpected character ';'");
  std::string with_nul = kX + "%1 = neg %0 : f32[2]\n";
  with_nul[with_nul.size() - 3] = '\0';
  expect_error(with_nul, StatusCode::kParse, "line 3, column 19: ", "unexpected character '\\x00'");
  expect_error(kX + "%1 = neg %0 : f32[2] \xc3\xa9\n", StatusCode::kParse, "line 3, column 22: ", "'\\xc3'");
}

TEST(TextParseErrors, TrailingGarbageAndMissingPieces) {
  expect_error(kX + "%1 = neg %0 : f32[2] extra\n", StatusCode::kParse,
               "line 3, column 22: ", "unexpected 'extra' after the end of the statement");
  expect_error(kX + "%1 = neg %0\n", StatusCode::kParse, "line 3, column 12: ", "found end of line");
  expect_error(kX + "%1 = add %0 %0 : f32[2]\n", StatusCode::kParse, "line 3, column 13: ", "expected ','");
  expect_error(kX + "%1 = neg %0 : f32[2\n", StatusCode::kParse,
               "line 3, column 20: ", "expected ',' or ']'");
  expect_error(kX + "%1 = neg %0 : [2]\n", StatusCode::kParse, "line 3, column 15: ", "expected a dtype");
  expect_error(kX + "%1 neg %0 : f32[2]\n", StatusCode::kParse,
               "line 3, column 4: ", "expected '=' after %1");
  expect_error(kX + "neg %0\n", StatusCode::kParse, "line 3, column 1: ", "expected a value definition");
  expect_error(kX + "output y = %0\n", StatusCode::kParse,
               "line 3, column 8: ", "output name in double quotes");
  expect_error(kX + "%1 = opaque \"f\" (%0 %0) : f32[1]\n", StatusCode::kParse,
               "line 3, column 21: ", "expected ',' or ')'");
}

TEST(TextParseErrors, BadNumbers) {
  expect_error(kHeader + "%0 = constant 1.2.3 : f32\n", StatusCode::kParse,
               "line 2, column 15: ", "found '1.2.3'");
  expect_error(kHeader + "%0 = constant 1e999 : f64\n", StatusCode::kParse,
               "line 2, column 15: ", "outside the range of f64");
  expect_error(kHeader + "%0 = constant 12abc : i32\n", StatusCode::kParse, "line 2, column 15: ", "'12abc'");
  expect_error(kHeader + "%0 = input \"x\" : f32[99999999999999999999]\n", StatusCode::kParse,
               "line 2, column 22: ", "out of the int64 range");
  expect_error(kHeader + "%0 = input \"x\" : f32[2.5]\n", StatusCode::kParse,
               "line 2, column 22: ", "expected a dim (an integer), found '2.5'");
  expect_error(kHeader + "%0 = constant 300 : u8\n", StatusCode::kParse,
               "line 2, column 15: ", "out of range for u8 (0..255)");
  expect_error(kHeader + "%0 = constant -129 : i8\n", StatusCode::kParse,
               "line 2, column 15: ", "out of range for i8 (-128..127)");
  expect_error(kHeader + "%0 = constant 9223372036854775808 : i64\n", StatusCode::kParse,
               "line 2, column 15: ", "out of the int64 range");
  expect_error(kHeader + "%0 = constant 1.5 : i32\n", StatusCode::kParse,
               "line 2, column 15: ", "an integer");
  expect_error(kHeader + "%0 = constant 1 : bool\n", StatusCode::kParse,
               "line 2, column 15: ", "true or false");
  expect_error(kHeader + "%0 = constant true : f32\n", StatusCode::kParse,
               "line 2, column 15: ", "expected a constant of dtype f32 (a decimal number");
  expect_error(kHeader + "%0 = constant infinity : f32\n", StatusCode::kParse,
               "line 2, column 15: ", "found 'infinity'");
  expect_error(kHeader + "%0 = iota axis=x : i32[3]\n", StatusCode::kParse,
               "line 2, column 16: ", "expected the value of axis (an integer)");
}

TEST(TextParseErrors, Attributes) {
  expect_error(kX + "%1 = reduce_sum %0 axes=[0] : f32\n", StatusCode::kParse,
               "line 3, column 29: ", "expected reduce_sum's attribute keepdims=true|false, found ':'");
  expect_error(kX + "%1 = neg %0 foo=1 : f32[2]\n", StatusCode::kParse,
               "line 3, column 13: ", "neg has no attribute 'foo' (it takes none)");
  expect_error(kX + "%1 = reduce_sum %0 axes=[0] axes=[0] keepdims=true : f32\n", StatusCode::kParse,
               "line 3, column 29: ", "attribute 'axes' is given twice");
  expect_error(kX + "%1 = reduce_sum %0 axes=[0] keepdims=yes : f32\n", StatusCode::kParse,
               "line 3, column 38: ", "expected true or false");
  expect_error(kX + "%1 = permute %0 perm 0 : f32[2]\n", StatusCode::kParse,
               "line 3, column 22: ", "expected '=' after the attribute name");
  expect_error(kX + "%1 = permute %0 order=[0] : f32[2]\n", StatusCode::kParse,
               "line 3, column 17: ", "(it takes perm=[...])");
}

TEST(TextParseErrors, BuilderErrorsPointAtTheOperation) {
  const std::string ints = kHeader + "%0 = input \"n\" : i32[2,3]\n";
  expect_error(ints + "%1 = exp %0 : i32[2,3]\n", StatusCode::kDtype, "line 3, column 6: ", "floating-point");
  expect_error(ints + "%1 = reduce_sum %0 axes=[5] keepdims=false : i32\n", StatusCode::kShape,
               "line 3, column 6: ", "out of range");
  expect_error(ints + "%1 = permute %0 perm=[0,0] : i32[2,2]\n", StatusCode::kShape,
               "line 3, column 6: ", "not a permutation");
  expect_error(ints + "%1 = reshape %0 : i32[5]\n", StatusCode::kShape,
               "line 3, column 6: ", "cannot reshape");
  expect_error(ints + "%1 = input \"n\" : f32[1]\n", StatusCode::kInvalidArgument,
               "line 3, column 6: ", "already exists");
  expect_error(kHeader + "%0 = input \"z\" : f32[0]\n", StatusCode::kUnsupported,
               "line 2, column 6: ", "empty tensors");
  expect_error(kHeader + "%0 = input \"\" : f32[1]\n", StatusCode::kInvalidArgument,
               "line 2, column 6: ", "input name is empty");
  expect_error(ints + "%1 = opaque \"mat mul\" (%0) : f32[1]\n", StatusCode::kInvalidArgument,
               "line 3, column 6: ", "opaque operation name");
  expect_error(ints + "%1 = select %0, %0, %0 : i32[2,3]\n", StatusCode::kDtype,
               "line 3, column 6: ", "bool condition");
  expect_error(ints + "%1 = iota axis=2 : i32[2,3]\n", StatusCode::kShape, "line 3, column 6: ", "axis 2");
  expect_error(ints + "output \"y\" = %0\noutput \"y\" = %0\n", StatusCode::kInvalidArgument,
               "line 4, column 1: ", "already exists");
  expect_error(ints + "  output \"\" = %0\n", StatusCode::kInvalidArgument,
               "line 3, column 3: ", "output name is empty");
}

TEST(TextParseErrors, AnnotationMustMatchTheInferredType) {
  expect_error(kX + "%1 = neg %0 : f16[2]\n", StatusCode::kDtype,
               "line 3, column 15: ", "neg yields f32[2], but the annotation says f16[2]");
  expect_error(kX + "%1 = neg %0 : f32[3]\n", StatusCode::kShape,
               "line 3, column 15: ", "neg yields f32[2], but the annotation says f32[3]");
  expect_error(kX + "%1 = lt %0, %0 : f32[2]\n", StatusCode::kDtype,
               "line 3, column 18: ", "lt yields bool[2]");
  expect_error(kX + "%1 = broadcast %0 : i32[4,2]\n", StatusCode::kDtype,
               "line 3, column 21: ", "broadcast yields f32[4,2]");
  expect_error(kX + "%1 = cast %0 : i32[3]\n", StatusCode::kShape,
               "line 3, column 16: ", "cast yields i32[2]");
  expect_error(kX + "%1 = reshape %0 : f32[-1]\n", StatusCode::kShape,
               "line 3, column 19: ", "the annotation says f32[-1]");
  expect_error(kHeader + "%0 = constant 1 : f32[1]\n", StatusCode::kShape,
               "line 2, column 19: ", "a constant is a scalar");
}

TEST(TextParseErrors, LinesAndColumnsCountBytesWithCrLfAndTabs) {
  expect_error("fstitch.graph 1\r\n\r\n# c\r\n\t%0 = neg %1 : f32[2]\r\n", StatusCode::kParse,
               "line 4, column 11: ", "%1 is not defined");
}

TEST(TextParseErrors, HugeInputsFailCleanly) {
  expect_error(kHeader + "%0 = input \"x\" : f32[" + std::string(1 << 20, '9') + "]\n", StatusCode::kParse,
               "line 2, column 22: ", "out of the int64 range");
  expect_error(kHeader + "%0 = constant " + std::string(1 << 20, '1') + " : f64\n", StatusCode::kParse,
               "line 2, column 15: ", "outside the range of f64");
  expect_error(
      kHeader + "%" + std::string(1 << 20, 'a') + " = neg %" + std::string(1 << 20, 'b') + " : f32\n",
      StatusCode::kParse, "line 2, column " + std::to_string((1 << 20) + 9) + ": ",
      "%bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb... (1048576 bytes) is not defined");
  std::string many_dims = kHeader + "%0 = input \"x\" : f32[1";
  for (int i = 0; i < 100000; ++i) many_dims += ",1";
  expect_error(many_dims + "]\n", StatusCode::kShape, "line 2, column 6: ", "more than the maximum 8");
  // Many lines of valid values.
  std::string chain = kHeader + "%v0 = input \"x\" : f32[2]\n";
  for (int i = 1; i < 20000; ++i) {
    chain += "%v" + std::to_string(i) + " = neg %v" + std::to_string(i - 1) + " : f32[2]\n";
  }
  EXPECT_EQ(parse_graph(chain).size(), 20000u);
}

// ---------------------------------------------------------------------------------------
// Mutated texts parse or throw Error; whatever parses prints and parses back the same.

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Returns whether the text parsed.
bool parse_must_not_misbehave(const std::string& text) {
  try {
    Graph g = parse_graph(text);
    if (!g.outputs().empty()) verify_graph(g);
    const std::string printed = print_graph(g);
    EXPECT_EQ(print_graph(parse_graph(printed)), printed) << text;
    return true;
  } catch (const Error&) {
    return false;  // a clean failure
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-Error exception " << e.what() << " for:\n" << text;
  } catch (...) {
    ADD_FAILURE() << "unknown exception for:\n" << text;
  }
  return false;
}

std::vector<std::string> seed_texts() {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF16, {2, 3});
  ValueId c = build_constant_f64(g, DType::kF16, -kInf);
  ValueId m = build_binary(g, OpKind::kMax, x, c);
  ValueId r = build_reduce(g, OpKind::kReduceSum, m, {0}, true);
  ValueId p = build_permute(g, build_reshape(g, build_cast(g, r, DType::kI64), {3, 1}), {1, 0});
  ValueId i = build_iota(g, DType::kI64, {1, 3}, 1);
  ValueId e = build_binary(g, OpKind::kEq, p, i);
  ValueId s = build_select(g, e, p, build_constant_i64(g, DType::kI64, -7));
  build_output(g, "s", s);
  build_output(g, "o", build_opaque(g, "op", {x, s}, DType::kBool, {2}));
  return {print_graph(g),
          "fstitch.graph 1 # c\n%a = input \"in put\" : bf16[]\n%b.c = constant nan : bf16\n"
          "%d = pow %a, %b.c : bf16\noutput \"d\" = %d\n"};
}

TEST(TextFuzz, EveryTruncation) {
  for (const std::string& text : seed_texts()) {
    for (size_t n = 0; n <= text.size(); ++n) parse_must_not_misbehave(text.substr(0, n));
  }
}

TEST(TextFuzz, RandomMutations) {
  const std::string interesting = std::string("%\"#=:,[]() \n\t\r-+.e0123456789_axf") + '\0' + "\x7f\xff";
  std::mt19937 rng(12345);
  int parsed = 0;
  int failed = 0;
  for (const std::string& seed : seed_texts()) {
    for (int round = 0; round < 3000; ++round) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits && !text.empty(); ++k) {
        const size_t at = rng() % text.size();
        switch (rng() % 6) {
          case 0:
            text[at] = interesting[rng() % interesting.size()];
            break;
          case 1:
            text[at] = static_cast<char>(rng() % 256);
            break;
          case 2:
            text.erase(at, 1 + rng() % 8);
            break;
          case 3:
            text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 16));
            break;
          case 4:  // another digit: other dims, axes, operands and constants
            if (is_digit(text[at])) text[at] = static_cast<char>('0' + rng() % 10);
            break;
          default: {  // drop the line holding `at`
            const size_t begin = text.rfind('\n', at);
            const size_t end = text.find('\n', at);
            text.erase(begin == std::string::npos ? 0 : begin,
                       end == std::string::npos ? std::string::npos : end - begin);
            break;
          }
        }
      }
      ++(parse_must_not_misbehave(text) ? parsed : failed);
    }
  }
  // The mutations reach both outcomes, so they exercise more than the first line.
  std::printf("mutations: %d parsed, %d failed\n", parsed, failed);
  EXPECT_GT(parsed, 100);
  EXPECT_GT(failed, 1000);
}

}  // namespace
}  // namespace fstitch
