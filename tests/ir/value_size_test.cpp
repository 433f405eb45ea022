// The limit on one value's bytes (2^62, kMaxValueBytes): every builder and the text parser
// refuse a value beyond it with a shape error, whatever the element count, and accept one
// exactly at it; a failing builder leaves the graph unchanged.
#include <gtest/gtest.h>

#include <string>

#include "common/error_of.hpp"
#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

constexpr int64_t kTwoTo31 = int64_t{1} << 31;
constexpr int64_t kTwoTo60 = int64_t{1} << 60;
constexpr int64_t kTwoTo61 = int64_t{1} << 61;
constexpr int64_t kTwoTo62 = int64_t{1} << 62;

using testing::error_of;

// Expects a shape error about the byte limit naming `what`, and the graph unchanged.
template <class Body>
void expect_too_large(Graph& g, Body&& body, const std::string& what) {
  const size_t before = g.size();
  const Error e = error_of(body);
  EXPECT_EQ(e.code(), StatusCode::kShape) << e.what();
  const std::string message = e.what();
  EXPECT_NE(message.find("more than the limit of 2^62 bytes for one value"), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(g.size(), before) << "a failing builder added values";
}

TEST(ValueSize, TheLimitIsInclusive) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kU8, {kTwoTo62});
  ValueId y = build_input(g, "y", DType::kF32, {kTwoTo60});
  ValueId z = build_input(g, "z", DType::kF64, {kTwoTo31, kTwoTo31 / 8});
  EXPECT_EQ(value_bytes(g, x), uint64_t{1} << 62);
  EXPECT_EQ(value_bytes(g, y), uint64_t{1} << 62);
  EXPECT_EQ(value_bytes(g, z), uint64_t{1} << 62);
}

TEST(ValueSize, InputsBeyondTheLimitAreShapeErrors) {
  Graph g;
  // 2^61 + 32 doubles: 2^64 + 256 bytes, which wraps to 256 in 64 bits.
  expect_too_large(
      g, [&] { build_input(g, "x", DType::kF64, {kTwoTo61 + 32}); }, "input \"x\" f64[");
  expect_too_large(
      g, [&] { build_input(g, "x", DType::kF32, {kTwoTo60 + 1}); }, "f32[1152921504606846977]");
  expect_too_large(
      g,
      [&] {
        build_input(g, "x", DType::kI64, {kTwoTo31, kTwoTo31});
      },
      "i64[2147483648,2147483648]");
  expect_too_large(
      g, [&] { build_input(g, "x", DType::kBool, {kTwoTo62 + 1}); }, "bool[");
}

TEST(ValueSize, IotaBeyondTheLimitIsAShapeError) {
  Graph g;
  // 2^62 elements of 8 bytes: 2^65 bytes, which wraps to 0 in 64 bits.
  expect_too_large(
      g,
      [&] {
        build_iota(g, DType::kF64, {kTwoTo31, kTwoTo31}, 0);
      },
      "iota result");
}

TEST(ValueSize, EveryBuilderChecksItsResult) {
  Graph g;
  ValueId small = build_input(g, "small", DType::kU8, {1, 1});
  ValueId bytes = build_input(g, "bytes", DType::kU8, {kTwoTo31, kTwoTo31});  // 2^62 bytes: fine
  ValueId flag = build_input(g, "flag", DType::kBool, {kTwoTo31, kTwoTo31});
  ValueId wide = build_input(g, "wide", DType::kI32, {1, 1});
  ValueId column = build_input(g, "column", DType::kI32, {kTwoTo31, 1});
  ValueId row = build_input(g, "row", DType::kI32, {1, kTwoTo31});
  ValueId cond = build_input(g, "cond", DType::kBool, {kTwoTo31, 1});
  ValueId doubles = build_input(g, "doubles", DType::kF64, {1, kTwoTo31});
  expect_too_large(
      g, [&] { build_cast(g, bytes, DType::kF32); }, "cast result");
  expect_too_large(
      g,
      [&] {
        build_broadcast(g, wide, {kTwoTo31, kTwoTo31});
      },
      "broadcast result");
  // Checked before the operands are broadcast, so nothing is added.
  expect_too_large(
      g, [&] { build_binary(g, OpKind::kAdd, column, row); }, "add result");
  expect_too_large(
      g, [&] { build_select(g, cond, doubles, doubles); }, "select result");
  expect_too_large(
      g,
      [&] {
        build_opaque(g, "big", {small}, DType::kF32, {kTwoTo31, kTwoTo31});
      },
      "opaque result");
  // Results no larger than their operands stay fine.
  EXPECT_NO_THROW(build_reduce(g, OpKind::kReduceMax, bytes, {0}, false));
  EXPECT_NO_THROW(build_reshape(g, bytes, {kTwoTo62}));
  EXPECT_NO_THROW(build_cast(g, flag, DType::kU8));
  EXPECT_NO_THROW(build_binary(g, OpKind::kEq, bytes, bytes));
}

TEST(ValueSize, TheParserRefusesValuesBeyondTheLimit) {
  // iota f64[2^31, 2^31] -> exp -> reduce_sum: 2^65 bytes for the iota.
  const Error iota = error_of([] {
    parse_graph(
        "fstitch.graph 1\n"
        "%0 = iota axis=0 : f64[2147483648,2147483648]\n"
        "%1 = exp %0 : f64[2147483648,2147483648]\n"
        "%2 = reduce_sum %1 axes=[1] keepdims=false : f64[2147483648]\n"
        "output \"y\" = %2\n");
  });
  EXPECT_EQ(iota.code(), StatusCode::kShape);
  EXPECT_NE(std::string(iota.what())
                .find("line 2, column 6: iota result f64[2147483648,2147483648] has "
                      "4611686018427387904 elements of 8 byte(s), more than the limit of "
                      "2^62 bytes for one value"),
            std::string::npos)
      << iota.what();

  // f64[2^61 + 32]: 2^64 + 256 bytes.
  const Error input = error_of([] {
    parse_graph(
        "fstitch.graph 1\n"
        "%0 = input \"x\" : f64[2305843009213693984]\n"
        "%1 = exp %0 : f64[2305843009213693984]\n"
        "%2 = reduce_sum %1 axes=[0] keepdims=false : f64[]\n"
        "output \"y\" = %2\n");
  });
  EXPECT_EQ(input.code(), StatusCode::kShape);
  EXPECT_NE(std::string(input.what()).find("line 2"), std::string::npos) << input.what();
  EXPECT_NE(std::string(input.what()).find("2^62 bytes"), std::string::npos) << input.what();

  // A cast that widens a value at the limit, and a broadcast past it.
  EXPECT_EQ(error_of([] {
              parse_graph(
                  "fstitch.graph 1\n"
                  "%0 = input \"x\" : u8[4611686018427387904]\n"
                  "%1 = cast %0 : i32[4611686018427387904]\n"
                  "output \"y\" = %1\n");
            }).code(),
            StatusCode::kShape);
  EXPECT_EQ(error_of([] {
              parse_graph(
                  "fstitch.graph 1\n"
                  "%0 = input \"x\" : f32[1]\n"
                  "%1 = broadcast %0 : f32[2147483648,2147483648]\n"
                  "output \"y\" = %1\n");
            }).code(),
            StatusCode::kShape);
}

}  // namespace
}  // namespace fstitch
