// Reference evaluator: slice, concat, pad, take (with its out-of-range rule) and split, with
// expected values written out by hand.
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
using reftest::int_buffer;
using reftest::int_values;

// 0, 1, 2, ... as i64 values.
std::vector<int64_t> counting(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(k);
  return v;
}

TEST(RefMovement, StridedSliceWithNegativeBounds) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI64, {3, 5});  // x[r][c] = 5r + c
  build_output(g, "a", build_slice(g, x, {1, -4}, {3, 100}, {1, 2}));
  build_output(g, "b", build_slice(g, x, {-1, 0}, {INT64_MAX, 5}, {5, 4}));
  const auto out = evaluate(g, {int_buffer(DType::kI64, counting(15))});
  EXPECT_EQ(int_values(out[0]), (std::vector<int64_t>{6, 8, 11, 13}));  // rows 1..2, cols 1, 3
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{10, 14}));        // row 2, cols 0, 4
}

TEST(RefMovement, ConcatAlongEachAxis) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {2, 2});
  ValueId b = build_input(g, "b", DType::kF32, {2, 1});
  ValueId c = build_input(g, "c", DType::kF32, {1, 2});
  build_output(g, "cols", build_concat(g, {a, b, a}, 1));
  build_output(g, "rows", build_concat(g, {c, a}, -2));
  const auto out = evaluate(g, {float_buffer(DType::kF32, {1, 2, 3, 4}), float_buffer(DType::kF32, {-1, -2}),
                                float_buffer(DType::kF32, {9, 8})});
  expect_same_values(float_values(out[0]), {1, 2, -1, 1, 2, 3, 4, -2, 3, 4}, "cols");
  expect_same_values(float_values(out[1]), {9, 8, 1, 2, 3, 4}, "rows");
}

TEST(RefMovement, PadFillsBothSidesWithTheValueInTheDtype) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF16, {1, 2});
  ValueId n = build_input(g, "n", DType::kU8, {2});
  build_output(g, "a", build_pad_f64(g, x, {1, 0}, {0, 1}, 0.1));
  build_output(g, "b", build_pad_f64(g, n, {2}, {1}, 300));  // 300 saturates to 255 in u8
  const auto out = evaluate(g, {float_buffer(DType::kF16, {1.5, -2}), int_buffer(DType::kU8, {7, 8})});
  const double p = reftest::round_to(DType::kF16, 0.1);
  expect_same_values(float_values(out[0]), {p, p, p, 1.5, -2, p}, "a");
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{255, 255, 7, 8, 255}));
}

TEST(RefMovement, TakeSelectsNegativeIndicesFromTheEndAndZeroesOutOfRange) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI32, {2, 3});  // 0 1 2 / 3 4 5, plus 10
  ValueId i = build_input(g, "i", DType::kI32, {2, 3});
  ValueId j = build_input(g, "j", DType::kI64, {4});
  ValueId ten = build_constant_i64(g, DType::kI32, 10);
  ValueId shifted = build_binary(g, OpKind::kAdd, x, ten);
  build_output(g, "cols", build_take(g, shifted, i, 1));
  build_output(g, "rows", build_take(g, shifted, j, 0));
  ValueId flags = build_binary(g, OpKind::kGt, x, build_constant_i64(g, DType::kI32, -1));
  build_output(g, "bool", build_take(g, flags, j, 0));
  const auto out =
      evaluate(g, {int_buffer(DType::kI32, counting(6)), int_buffer(DType::kI32, {0, 2, -1, -3, -4, 3}),
                   int_buffer(DType::kI64, {1, -2, INT64_MIN, INT64_MAX})});
  // Row r, index (k0,k1): x[r][i[k0][k1]]; -1 is the last, -3 the first, -4 and 3 are out.
  EXPECT_EQ(int_values(out[0]), (std::vector<int64_t>{10, 12, 12, 10, 0, 0, 13, 15, 15, 13, 0, 0}));
  EXPECT_EQ(int_values(out[1]), (std::vector<int64_t>{13, 14, 15, 10, 11, 12, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(int_values(out[2]), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(RefMovement, SplitSectionsCoverTheAxisInOrder) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {2, 4});
  const std::vector<ValueId> parts = build_split(g, x, 1, {1, 3});
  build_output(g, "first", parts[0]);
  build_output(g, "rest", parts[1]);
  const auto out = evaluate(g, {float_buffer(DType::kF64, {0, 1, 2, 3, 4, 5, 6, 7})});
  expect_same_values(float_values(out[0]), {0, 4}, "first");
  expect_same_values(float_values(out[1]), {1, 2, 3, 5, 6, 7}, "rest");
}

}  // namespace
}  // namespace fstitch
