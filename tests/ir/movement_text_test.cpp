// The text format of slice, concat, pad and take: exact printed text with normalized
// attributes, round trips in every dtype, and errors with their positions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

const std::string kHeader = "fstitch.graph 1\n";

std::vector<DType> all_dtypes() {
  std::vector<DType> dtypes;
  for (int i = kFirstDType; i <= kLastDType; ++i) dtypes.push_back(static_cast<DType>(i));
  return dtypes;
}

// print -> parse gives the same nodes and attributes, and printing that gives the same text.
void expect_round_trip(const Graph& graph) {
  const std::string text = print_graph(graph);
  SCOPED_TRACE(text);
  Graph parsed;
  try {
    parsed = parse_graph(text);
  } catch (const Error& e) {
    FAIL() << "parse failed: " << e.what();
  }
  ASSERT_EQ(parsed.size(), graph.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& a = graph.node(static_cast<ValueId>(i));
    const Node& b = parsed.node(static_cast<ValueId>(i));
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.operands, b.operands);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.dims, b.dims);
    EXPECT_EQ(a.axis, b.axis);
    EXPECT_EQ(a.starts, b.starts);
    EXPECT_EQ(a.stops, b.stops);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.pad_low, b.pad_low);
    EXPECT_EQ(a.pad_high, b.pad_high);
    if (a.op == OpKind::kPad) {
      EXPECT_EQ(a.value.f, b.value.f);
      EXPECT_EQ(a.value.i, b.value.i);
    }
  }
  EXPECT_EQ(print_graph(parsed), text);
  EXPECT_NO_THROW(verify_graph(parsed));
}

// Parsing fails with `code` and a message that starts with `position` and contains `detail`.
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

TEST(TextRoundTrip, MovementOperationsInEveryDtype) {
  for (DType t : all_dtypes()) {
    SCOPED_TRACE(dtype_name(t));
    Graph g;
    ValueId x = build_input(g, "x", t, {4, 6});
    ValueId idx32 = build_input(g, "i", DType::kI32, {2, 3});
    ValueId idx64 = build_input(g, "j", DType::kI64, {});
    build_output(g, "slice", build_slice(g, x, {-3, 1}, {100, -1}, {2, 3}));
    build_output(g, "concat", build_concat(g, {x, x, build_slice(g, x, {0, 0}, {1, 6}, {})}, -2));
    const Scalar pad = is_float(t) ? scalar_from_f64(-2.5, t) : scalar_from_i64(is_bool(t) ? 1 : -3, t);
    build_output(g, "pad", build_pad(g, x, {0, 2}, {1, 0}, pad));
    build_output(g, "take", build_take(g, x, idx32, 1));
    build_output(g, "take0", build_take(g, x, idx64, -2));
    for (ValueId part : build_split(g, x, 1, {1, 2, 3}))
      build_output(g, "split" + std::to_string(part), part);
    expect_round_trip(g);
  }
}

TEST(TextPrint, MovementOperationsPrintTheirNormalizedAttributes) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4, 6});
  ValueId i = build_input(g, "i", DType::kI64, {3});
  build_output(g, "a", build_slice(g, x, {-3, 1}, {100, -1}, {2, 3}));
  build_output(g, "b", build_concat(g, {x, x}, -1));
  build_output(g, "c", build_pad(g, x, {1, 0}, {0, 2}, scalar_from_f64(0.5, DType::kF32)));
  build_output(g, "d", build_take(g, x, i, 0));
  EXPECT_EQ(print_graph(g), kHeader +
                                "%0 = input \"x\" : f32[4,6]\n"
                                "%1 = input \"i\" : i64[3]\n"
                                "%2 = slice %0 start=[1,1] stop=[4,5] step=[2,3] : f32[2,2]\n"
                                "%3 = concat %0, %0 axis=1 : f32[4,12]\n"
                                "%4 = pad %0 low=[1,0] high=[0,2] value=0.5 : f32[5,8]\n"
                                "%5 = take %0, %1 axis=0 : f32[3,6]\n"
                                "output \"a\" = %2\n"
                                "output \"b\" = %3\n"
                                "output \"c\" = %4\n"
                                "output \"d\" = %5\n");
}

TEST(TextParse, MovementOperationErrors) {
  const std::string x = kHeader + "%0 = input \"x\" : f32[4,6]\n";
  expect_error(x + "%1 = slice %0 start=[0,0] stop=[4,6] : f32[4,6]\n", StatusCode::kParse, "line 3, column",
               "slice's attribute step=[...]");
  expect_error(x + "%1 = slice %0 start=[0,3] stop=[4,3] step=[1,1] : f32[4,1]\n", StatusCode::kShape,
               "line 3, column 6", "is empty");
  expect_error(x + "%1 = pad %0 low=[0,0] high=[0,-1] value=0 : f32[4,5]\n", StatusCode::kShape,
               "line 3, column 6", "must not be negative");
  expect_error(x + "%1 = pad %0 low=[0,0] high=[0,1] value=true : f32[4,7]\n", StatusCode::kParse,
               "line 3, column 40", "expected a constant of dtype f32");
  expect_error(x + "%1 = take %0, %0 axis=0 : f32[4,6,6]\n", StatusCode::kDtype, "line 3, column 6",
               "i32 or i64 indices");
  expect_error(x + "%1 = concat %0, %0 axis=2 : f32[4,12]\n", StatusCode::kShape, "line 3, column 6",
               "out of range");
  expect_error(x + "%1 = concat %0, %0 axis=1 : f32[4,13]\n", StatusCode::kShape, "line 3, column",
               "annotation says f32[4,13]");
}

}  // namespace
}  // namespace fstitch
