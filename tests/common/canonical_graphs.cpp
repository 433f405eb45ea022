#include "common/canonical_graphs.hpp"

#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

// Computation in f32 for f16/bf16 inputs, as frameworks do: cast in, compute, cast out.
ValueId to_compute(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 ? build_cast(g, x, DType::kF32) : x;
}
ValueId to_storage(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 ? build_cast(g, x, dtype) : x;
}
DType compute_dtype(DType dtype) {
  return dtype == DType::kF64 ? DType::kF64 : DType::kF32;
}

ValueId normalize(Graph& g, ValueId x, DType ct) {
  ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {-1}, true);
  ValueId centered = build_binary(g, OpKind::kSub, x, mean);
  ValueId var =
      build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, centered, centered), {-1}, true);
  ValueId eps = build_constant_f64(g, ct, 1e-5);
  return build_binary(g, OpKind::kMul, centered,
                      build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps)));
}

}  // namespace

Graph layer_norm(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const DType ct = compute_dtype(dtype);
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId gamma = to_compute(g, build_input(g, "gamma", dtype, {cols}), dtype);
  ValueId beta = to_compute(g, build_input(g, "beta", dtype, {cols}), dtype);
  ValueId y = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, normalize(g, x, ct), gamma), beta);
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

Graph softmax_scale_mask(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const DType ct = compute_dtype(dtype);
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId mask = to_compute(g, build_input(g, "mask", dtype, {rows, cols}), dtype);
  ValueId scaled =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, x, build_constant_f64(g, ct, 0.125)), mask);
  ValueId max = build_reduce(g, OpKind::kReduceMax, scaled, {-1}, true);
  ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, scaled, max));
  ValueId y = build_binary(g, OpKind::kDiv, e, build_reduce(g, OpKind::kReduceSum, e, {-1}, true));
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

Graph rms_norm(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const DType ct = compute_dtype(dtype);
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId w = to_compute(g, build_input(g, "w", dtype, {cols}), dtype);
  ValueId ms = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, x, x), {1}, true);
  ValueId inv =
      build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, ms, build_constant_f64(g, ct, 1e-6)));
  ValueId y = build_binary(g, OpKind::kMul, build_binary(g, OpKind::kMul, x, inv), w);
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

Graph log_softmax(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId max = build_reduce(g, OpKind::kReduceMax, x, {-1}, true);
  ValueId shifted = build_binary(g, OpKind::kSub, x, max);
  ValueId lse =
      build_unary(g, OpKind::kLog,
                  build_reduce(g, OpKind::kReduceSum, build_unary(g, OpKind::kExp, shifted), {-1}, true));
  build_output(g, "y", to_storage(g, build_binary(g, OpKind::kSub, shifted, lse), dtype));
  return g;
}

Graph bias_residual_layer_norm(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const DType ct = compute_dtype(dtype);
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId bias = to_compute(g, build_input(g, "bias", dtype, {cols}), dtype);
  ValueId residual = to_compute(g, build_input(g, "residual", dtype, {rows, cols}), dtype);
  ValueId gamma = to_compute(g, build_input(g, "gamma", dtype, {cols}), dtype);
  ValueId beta = to_compute(g, build_input(g, "beta", dtype, {cols}), dtype);
  ValueId h = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kAdd, x, bias), residual);
  ValueId y = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, normalize(g, h, ct), gamma), beta);
  build_output(g, "y", to_storage(g, y, dtype));
  build_output(g, "h", to_storage(g, h, dtype));
  return g;
}

Graph gelu_bias(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId x = to_compute(g, build_input(g, "x", dtype, {rows, cols}), dtype);
  ValueId bias = to_compute(g, build_input(g, "bias", dtype, {cols}), dtype);
  ValueId y = build_unary(g, OpKind::kGelu, build_binary(g, OpKind::kAdd, x, bias));
  build_output(g, "y", to_storage(g, y, dtype));
  return g;
}

const std::vector<CanonicalGraph>& canonical_graphs() {
  static const std::vector<CanonicalGraph> graphs = {
      {"layer_norm", layer_norm},
      {"softmax_scale_mask", softmax_scale_mask},
      {"rms_norm", rms_norm},
      {"log_softmax", log_softmax},
      {"bias_residual_layer_norm", bias_residual_layer_norm},
      {"gelu_bias", gelu_bias},
  };
  return graphs;
}

}  // namespace fstitch::testing
