// Shape and dtype inference of slice, concat, pad, take and split, and their errors: each
// failing builder leaves the graph unchanged.
#include <gtest/gtest.h>

#include <climits>

#include "common/error_of.hpp"
#include "ir/builder.hpp"
#include "ir/verify.hpp"

namespace fstitch {
namespace {

using testing::error_of;

// Expects `body` to fail with `code` and a message containing `detail`, adding no node.
template <class Body>
void expect_failure(Graph& g, StatusCode code, const std::string& detail, Body&& body) {
  const size_t before = g.size();
  const Error e = error_of(body);
  EXPECT_EQ(e.code(), code) << e.what();
  EXPECT_NE(std::string(e.what()).find(detail), std::string::npos) << e.what();
  EXPECT_EQ(g.size(), before);
}

TEST(MovementBuilders, SliceNormalizesBoundsLikePython) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBF16, {10, 7, 3});
  ValueId s = build_slice(g, x, {-4, 1, -100}, {INT64_MAX, -1, 100}, {3, 2, 1});
  const Node& n = g.node(s);
  EXPECT_EQ(n.dtype, DType::kBF16);
  EXPECT_EQ(n.dims, (Dims{2, 3, 3}));  // 6..9 step 3; 1..5 step 2; all
  EXPECT_EQ(n.starts, (std::vector<int64_t>{6, 1, 0}));
  EXPECT_EQ(n.stops, (std::vector<int64_t>{10, 6, 3}));
  EXPECT_EQ(n.steps, (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(g.node(build_slice(g, x, {0, 0, 0}, {10, 7, 3}, {})).steps, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(g.node(build_slice(g, x, {INT64_MIN, 6, 2}, {1, 7, 3}, {5, 1, 9})).dims, (Dims{1, 1, 1}));
  EXPECT_EQ(g.node(build_slice(g, x, {0, 0, 0}, {10, 7, 3}, {INT64_MAX, 3, INT64_MAX})).dims,
            (Dims{1, 3, 1}));
}

TEST(MovementBuilders, SliceErrors) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4, 6});
  expect_failure(g, StatusCode::kShape, "one start per axis", [&] { build_slice(g, x, {0}, {4}, {}); });
  expect_failure(g, StatusCode::kShape, "one step per axis", [&] { build_slice(g, x, {0, 0}, {4, 6}, {1}); });
  expect_failure(g, StatusCode::kShape, "step 0 is not at least 1", [&] {
    build_slice(g, x, {0, 0}, {4, 6}, {1, 0});
  });
  expect_failure(g, StatusCode::kShape, "is empty", [&] { build_slice(g, x, {0, 4}, {4, 2}, {}); });
  expect_failure(g, StatusCode::kShape, "is empty", [&] { build_slice(g, x, {4, 0}, {10, 6}, {}); });
  expect_failure(g, StatusCode::kInvalidArgument, "does not exist", [&] { build_slice(g, 99, {}, {}, {}); });
}

TEST(MovementBuilders, ConcatSumsTheAxisAndChecksTheRest) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kI8, {2, 3, 4});
  ValueId b = build_input(g, "b", DType::kI8, {2, 5, 4});
  ValueId c = build_concat(g, {a, b, a}, -2);
  EXPECT_EQ(g.node(c).dims, (Dims{2, 11, 4}));
  EXPECT_EQ(g.node(c).axis, 1);
  EXPECT_EQ(g.node(build_concat(g, {a}, 0)).dims, (Dims{2, 3, 4}));
  ValueId f = build_input(g, "f", DType::kF32, {2, 3, 4});
  ValueId s = build_input(g, "s", DType::kI8, {});
  expect_failure(g, StatusCode::kDtype, "insert a cast", [&] { build_concat(g, {a, f}, 0); });
  expect_failure(g, StatusCode::kShape, "other dims agree", [&] { build_concat(g, {a, b}, 0); });
  expect_failure(g, StatusCode::kShape, "out of range", [&] { build_concat(g, {a, b}, 3); });
  expect_failure(g, StatusCode::kShape, "has no axis", [&] { build_concat(g, {s, s}, 0); });
  expect_failure(g, StatusCode::kInvalidArgument, "at least one operand", [&] { build_concat(g, {}, 0); });
  ValueId r = build_input(g, "r", DType::kI8, {2, 3});
  expect_failure(g, StatusCode::kShape, "other dims agree", [&] { build_concat(g, {a, r}, 0); });
}

TEST(MovementBuilders, PadGrowsEachAxisAndRejectsNegativePads) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBool, {2, 3});
  ValueId p = build_pad_f64(g, x, {1, 0}, {2, 4}, 5.0);
  EXPECT_EQ(g.node(p).dims, (Dims{5, 7}));
  EXPECT_EQ(g.node(p).value.i, 1);  // 5.0 as bool
  ValueId y = build_input(g, "y", DType::kI32, {2});
  EXPECT_EQ(g.node(build_pad_f64(g, y, {0}, {0}, -2.9)).value.i, -2);  // converted as by a cast
  expect_failure(g, StatusCode::kShape, "must not be negative", [&] {
    build_pad_f64(g, x, {-1, 0}, {0, 0}, 0);
  });
  expect_failure(g, StatusCode::kShape, "one high pad per axis", [&] {
    build_pad_f64(g, x, {0, 0}, {0}, 0);
  });
  expect_failure(g, StatusCode::kShape, "more than int64 can count", [&] {
    build_pad_f64(g, x, {INT64_MAX, 0}, {1, 0}, 0);
  });
  expect_failure(g, StatusCode::kShape, "2^62 bytes", [&] {
    build_pad_f64(g, x, {int64_t{1} << 61, 0}, {0, 0}, 0);
  });
}

TEST(MovementBuilders, TakeReplacesTheAxisByTheIndexDims) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF16, {3, 4, 5});
  ValueId i = build_input(g, "i", DType::kI32, {2, 6});
  ValueId j = build_input(g, "j", DType::kI64, {});
  EXPECT_EQ(g.node(build_take(g, x, i, 1)).dims, (Dims{3, 2, 6, 5}));
  EXPECT_EQ(g.node(build_take(g, x, j, -1)).dims, (Dims{3, 4}));
  EXPECT_EQ(g.node(build_take(g, x, i, 0)).dtype, DType::kF16);
  ValueId f = build_input(g, "f", DType::kF32, {2});
  ValueId u = build_input(g, "u", DType::kU8, {2});
  ValueId big = build_input(g, "big", DType::kI32, {1, 1, 1, 1, 1, 1, 1});
  expect_failure(g, StatusCode::kDtype, "i32 or i64 indices", [&] { build_take(g, x, f, 0); });
  expect_failure(g, StatusCode::kDtype, "i32 or i64 indices", [&] { build_take(g, x, u, 0); });
  expect_failure(g, StatusCode::kShape, "out of range", [&] { build_take(g, x, i, 3); });
  expect_failure(g, StatusCode::kShape, "more than the maximum", [&] { build_take(g, x, big, 0); });
  expect_failure(g, StatusCode::kShape, "has no axis", [&] { build_take(g, j, i, 0); });
}

TEST(MovementBuilders, SplitBuildsSlicesOrNothing) {
  Graph g;
  ValueId x = build_input(g, "qkv", DType::kF32, {8, 12});
  const std::vector<ValueId> parts = build_split(g, x, -1, {4, 4, 4});
  ASSERT_EQ(parts.size(), 3u);
  for (size_t k = 0; k < parts.size(); ++k) {
    const Node& n = g.node(parts[k]);
    EXPECT_EQ(n.op, OpKind::kSlice);
    EXPECT_EQ(n.dims, (Dims{8, 4}));
    EXPECT_EQ(n.starts, (std::vector<int64_t>{0, 4 * static_cast<int64_t>(k)}));
  }
  expect_failure(g, StatusCode::kShape, "add up to 11", [&] { build_split(g, x, 1, {4, 4, 3}); });
  expect_failure(g, StatusCode::kShape, "at least one element", [&] { build_split(g, x, 1, {12, 0}); });
  expect_failure(g, StatusCode::kShape, "add up to", [&] { build_split(g, x, 1, {INT64_MAX, 2}); });
  expect_failure(g, StatusCode::kShape, "out of range", [&] { build_split(g, x, 2, {12}); });
  expect_failure(g, StatusCode::kInvalidArgument, "at least one section", [&] { build_split(g, x, 0, {}); });
  build_output(g, "q", parts[0]);
  EXPECT_NO_THROW(verify_graph(g));
}

TEST(MovementBuilders, VerifierRejectsHandMadeNodesOutOfRange) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {4});
  Node n;
  n.op = OpKind::kSlice;
  n.operands = {x};
  n.starts = {-1};  // builders normalize; a node must hold 0 <= start < stop <= dim
  n.stops = {4};
  n.steps = {1};
  n.dims = {5};
  g.append(n);
  build_output(g, "y", 1);
  const Error e = error_of([&] { verify_graph(g); });
  EXPECT_EQ(e.code(), StatusCode::kShape);
  EXPECT_NE(std::string(e.what()).find("not within 0..4"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace fstitch
