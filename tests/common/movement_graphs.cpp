#include "common/movement_graphs.hpp"

#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

ValueId to_compute(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 ? build_cast(g, x, DType::kF32) : x;
}
ValueId to_storage(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 ? build_cast(g, x, dtype) : x;
}

// Indices 3k - 5 for k = 0..count-1: negative, in range and past the end of a dim near
// `count`, so the out-of-range rule is exercised without random inputs.
ValueId stepped_indices(Graph& g, DType dtype, int64_t count) {
  ValueId k = build_iota(g, dtype, {count}, 0);
  ValueId three = build_constant_i64(g, dtype, 3);
  ValueId five = build_constant_i64(g, dtype, 5);
  return build_binary(g, OpKind::kSub, build_binary(g, OpKind::kMul, k, three), five);
}

// Strided and negative-bound slices; one feeds a row reduction.
Graph strided_slices(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const int64_t wide = 2 * cols + 3;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, wide}), dtype);
  ValueId even = build_slice(g, x, {0, 0}, {rows, wide - 3}, {1, 2});
  ValueId odd = build_slice(g, x, {0, 1}, {INT64_MAX, -2}, {1, 2});
  ValueId sum = build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, even, odd), {-1}, true);
  ValueId y = build_binary(g, OpKind::kSub, even, sum);
  build_output(g, "y", to_storage(g, y, dtype));
  ValueId tail = build_slice(g, x, {-rows, -3}, {rows, wide}, {});  // the last three columns
  build_output(g, "tail", to_storage(g, build_unary(g, OpKind::kExp, tail), dtype));
  return g;
}

// Three operands of different lengths along the first axis, and a concat of bools.
Graph concat_three(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId a = to_compute(g, build_input(g, "a", dtype, {rows, cols}), dtype);
  ValueId b = to_compute(g, build_input(g, "b", dtype, {1, cols}), dtype);
  ValueId c = to_compute(g, build_input(g, "c", dtype, {rows + 2, cols}), dtype);
  ValueId cat = build_concat(g, {build_unary(g, OpKind::kTanh, a), b, c}, 0);
  ValueId y = build_binary(g, OpKind::kMul, cat, cat);
  build_output(g, "y", to_storage(g, y, dtype));
  ValueId zero = build_constant_f64(g, g.node(a).dtype, 0);
  ValueId positive_a = build_binary(g, OpKind::kGt, a, zero);
  ValueId positive_c = build_binary(g, OpKind::kGt, c, zero);
  ValueId flags = build_concat(g, {positive_c, positive_a}, -2);
  build_output(g, "flags", build_select(g, flags, build_concat(g, {c, a}, 0), zero));
  return g;
}

// Pads on both sides; one feeds a row reduction, one is an integer pad.
Graph pad_reduce(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId padded = build_pad_f64(g, build_unary(g, OpKind::kRelu, x), {1, 2}, {0, 3}, 0.5);
  ValueId mean = build_reduce(g, OpKind::kReduceMean, padded, {-1}, true);
  build_output(g, "y", to_storage(g, build_binary(g, OpKind::kSub, padded, mean), dtype));
  ValueId n = build_input(g, "n", DType::kI32, {rows, 3});
  ValueId wrapped = build_pad(g, build_binary(g, OpKind::kAdd, n, n), {2, 0}, {1, 1}, Scalar{0, -7});
  build_output(g, "n2", wrapped);
  return g;
}

// take along each axis: random i32 indices (mostly out of range), stepped i64 indices, a
// rank-0 index, and a two-dimensional index tensor.
Graph take_axes(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId random = build_input(g, "idx", DType::kI32, {5});
  ValueId rows_taken = build_take(g, build_unary(g, OpKind::kNeg, x), random, 0);
  build_output(g, "rows", to_storage(g, rows_taken, dtype));
  ValueId stepped = stepped_indices(g, DType::kI64, cols + 2);
  ValueId cols_taken = build_take(g, x, stepped, -1);
  ValueId scaled = build_binary(g, OpKind::kMul, cols_taken, cols_taken);
  build_output(g, "cols", to_storage(g, scaled, dtype));
  ValueId last = build_take(g, x, build_constant_i64(g, DType::kI32, -1), 0);
  build_output(g, "last", to_storage(g, build_unary(g, OpKind::kSin, last), dtype));
  ValueId positive = build_binary(g, OpKind::kGt, x, build_constant_f64(g, g.node(x).dtype, 0));
  build_output(g, "flags", build_take(g, positive, random, 0));  // false where out of range
  ValueId padded_flags = build_pad(g, positive, {1, 0}, {0, 1}, Scalar{0, 1});
  build_output(g, "padded_flags", build_concat(g, {padded_flags, padded_flags}, 0));
  ValueId grid = build_reshape(g, stepped_indices(g, DType::kI32, 2 * rows), {2, rows});
  build_output(g, "grid", to_storage(g, build_take(g, x, grid, 0), dtype));
  return g;
}

// A concat of two feature blocks normalized over the last axis, and a row padded with a
// large negative value fed to a softmax: movement upstream of row reductions.
Graph concat_norm_pad_softmax(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId a = to_compute(g, build_input(g, "a", dtype, {rows, cols}), dtype);
  ValueId b = to_compute(g, build_input(g, "b", dtype, {rows, cols / 2 + 1}), dtype);
  ValueId x = build_concat(g, {a, b}, -1);
  ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {-1}, true);
  ValueId centered = build_binary(g, OpKind::kSub, x, mean);
  ValueId var =
      build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, centered, centered), {-1}, true);
  ValueId eps = build_constant_f64(g, g.node(a).dtype, 1e-5);
  ValueId y = build_binary(g, OpKind::kMul, centered,
                           build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps)));
  build_output(g, "y", to_storage(g, y, dtype));
  ValueId padded = build_pad_f64(g, a, {0, 0}, {0, 3}, -1e4);
  ValueId e = build_unary(
      g, OpKind::kExp,
      build_binary(g, OpKind::kSub, padded, build_reduce(g, OpKind::kReduceMax, padded, {-1}, true)));
  ValueId p = build_binary(g, OpKind::kDiv, e, build_reduce(g, OpKind::kReduceSum, e, {-1}, true));
  build_output(g, "p", to_storage(g, p, dtype));
  return g;
}

}  // namespace

Graph rotate_half(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const int64_t half = cols / 2;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId cos = to_compute(g, build_input(g, "cos", dtype, {rows, cols}), dtype);
  ValueId sin = to_compute(g, build_input(g, "sin", dtype, {rows, cols}), dtype);
  ValueId x1 = build_slice(g, x, {0, 0}, {rows, half}, {});
  ValueId x2 = build_slice(g, x, {0, half}, {rows, cols}, {});
  ValueId rotated = build_concat(g, {build_unary(g, OpKind::kNeg, x2), x1}, -1);
  ValueId y = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, x, cos),
                           build_binary(g, OpKind::kMul, rotated, sin));
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

Graph qkv_split(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId qkv = to_compute(g, build_input(g, "qkv", dtype, {rows, 3 * cols}), dtype);
  const std::vector<ValueId> parts = build_split(g, qkv, -1, {cols, cols, cols});
  const DType ct = g.node(qkv).dtype;
  ValueId q = build_binary(g, OpKind::kMul, parts[0], build_constant_f64(g, ct, 0.125));
  ValueId k = build_unary(g, OpKind::kNeg, parts[1]);
  ValueId v = build_binary(g, OpKind::kAdd, parts[2], build_constant_f64(g, ct, 1.0));
  build_output(g, "q", to_storage(g, q, dtype));
  build_output(g, "k", to_storage(g, k, dtype));
  build_output(g, "v", to_storage(g, v, dtype));
  return g;
}

// A softmax over the rows handed on transposed ([cols, rows]) and as it is: a permute
// downstream of a row reduction.
Graph softmax_transposed(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const Dims dims = {rows, cols};
  ValueId x = to_compute(g, build_input(g, "x", dtype, dims), dtype);
  ValueId m = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {1}, true), dims);
  ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, m));
  ValueId y = build_binary(g, OpKind::kDiv, e,
                           build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), dims));
  build_output(g, "y_transposed", to_storage(g, build_permute(g, y, {1, 0}), dtype));
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

const std::vector<MovementGraph>& movement_graphs() {
  static const std::vector<MovementGraph> graphs = {
      {"rotate_half", rotate_half},
      {"qkv_split", qkv_split},
      {"strided_slices", strided_slices},
      {"concat_three", concat_three},
      {"pad_reduce", pad_reduce},
      {"take_axes", take_axes},
      {"concat_norm_pad_softmax", concat_norm_pad_softmax},
      {"softmax_transposed", softmax_transposed},
  };
  return graphs;
}

}  // namespace fstitch::testing
