#include "common/reduction_graphs.hpp"

#include <stdexcept>
#include <utility>

#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

// f16/bf16 are summed in f32, as frameworks do: cast in, reduce, cast out.
bool low_precision(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16;
}

Graph sum_over_axis(const std::string& input, const Dims& dims, int64_t axis, DType dtype) {
  Graph g;
  ValueId x = build_input(g, input, dtype, dims);
  if (low_precision(dtype)) x = build_cast(g, x, DType::kF32);
  ValueId sum = build_reduce(g, OpKind::kReduceSum, x, {axis}, false);
  if (low_precision(dtype)) sum = build_cast(g, sum, dtype);
  build_output(g, "y", sum);
  return g;
}

}  // namespace

Graph bias_grad_column_sum(int64_t rows, int64_t cols, DType dtype) {
  return sum_over_axis("dy", {rows, cols}, 0, dtype);
}

Graph middle_axis_sum(int64_t outer, int64_t middle, int64_t inner, DType dtype) {
  return sum_over_axis("x", {outer, middle, inner}, 1, dtype);
}

const char* column_pass_graph_name(ColumnPassGraph kind) {
  switch (kind) {
    case ColumnPassGraph::kSoftmax:
      return "softmax";
    case ColumnPassGraph::kLogSoftmax:
      return "log_softmax";
    case ColumnPassGraph::kNormalize:
      return "normalize";
    case ColumnPassGraph::kCentered:
      return "centered";
  }
  return "?";
}

Graph column_pass_graph(ColumnPassGraph kind, DType dtype, const Dims& dims,
                        const std::vector<int64_t>& axes) {
  Graph g;
  const ValueId x = build_input(g, "x", dtype, dims);
  auto spread = [&](ValueId r) { return build_broadcast(g, r, dims); };
  switch (kind) {
    case ColumnPassGraph::kSoftmax:
    case ColumnPassGraph::kLogSoftmax: {
      const ValueId shifted =
          build_binary(g, OpKind::kSub, x, spread(build_reduce(g, OpKind::kReduceMax, x, axes, true)));
      const ValueId e = build_unary(g, OpKind::kExp, shifted);
      const ValueId s = spread(build_reduce(g, OpKind::kReduceSum, e, axes, true));
      build_output(g, "y",
                   kind == ColumnPassGraph::kSoftmax
                       ? build_binary(g, OpKind::kDiv, e, s)
                       : build_binary(g, OpKind::kSub, shifted, build_unary(g, OpKind::kLog, s)));
      break;
    }
    case ColumnPassGraph::kNormalize: {
      const ValueId mean = build_reduce(g, OpKind::kReduceMean, x, axes, true);
      const ValueId centered = build_binary(g, OpKind::kSub, x, spread(mean));
      const ValueId var =
          build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, centered, centered), axes, true);
      const ValueId eps = build_constant_f64(g, dtype, 1e-5);
      const ValueId inv = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
      build_output(g, "y", build_binary(g, OpKind::kMul, centered, spread(inv)));
      build_output(g, "mean", mean);
      break;
    }
    case ColumnPassGraph::kCentered:
      build_output(
          g, "y",
          build_binary(g, OpKind::kSub, x, spread(build_reduce(g, OpKind::kReduceMean, x, axes, true))));
      break;
  }
  return g;
}

Graph column_softmax(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const Dims dims = {rows, cols};
  ValueId x = build_input(g, "x", dtype, dims);
  if (low_precision(dtype)) x = build_cast(g, x, DType::kF32);
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {0}, true), dims);
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, max));
  const ValueId sum = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {0}, true), dims);
  ValueId y = build_binary(g, OpKind::kDiv, e, sum);
  if (low_precision(dtype)) y = build_cast(g, y, dtype);
  build_output(g, "y", y);
  return g;
}

Graph group_norm(const GroupNormShape& s, DType dtype, GroupNormExtras extras) {
  if (s.groups < 1 || s.c % s.groups != 0)
    throw std::invalid_argument("group_norm: the channels must split into whole groups");
  Graph g;
  const Dims dims = {s.n, s.c, s.hw};
  const Dims view = {s.n, s.groups, s.c / s.groups * s.hw};
  auto in_f32 = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, DType::kF32) : v; };
  const DType compute = low_precision(dtype) ? DType::kF32 : dtype;
  const ValueId x = in_f32(build_input(g, "x", dtype, dims));
  const ValueId gamma = in_f32(build_input(g, "gamma", dtype, {s.c, 1}));
  const ValueId beta = in_f32(build_input(g, "beta", dtype, {s.c, 1}));
  const ValueId xv = build_reshape(g, x, view);
  const ValueId mean = build_reduce(g, OpKind::kReduceMean, xv, {2}, true);
  const ValueId xc = build_binary(g, OpKind::kSub, xv, build_broadcast(g, mean, view));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), {2}, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, compute, 1e-5), {s.n, s.groups, 1});
  const ValueId rstd = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
  const ValueId xhat =
      build_reshape(g, build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, view)), dims);
  ValueId y =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, build_broadcast(g, gamma, dims)),
                   build_broadcast(g, beta, dims));
  if (extras == GroupNormExtras::kResidualAndMean)
    y = build_binary(g, OpKind::kAdd, y, in_f32(build_input(g, "residual", dtype, dims)));
  build_output(g, "y", low_precision(dtype) ? build_cast(g, y, dtype) : y);
  if (extras == GroupNormExtras::kResidualAndMean)
    build_output(g, "mean", low_precision(dtype) ? build_cast(g, mean, dtype) : mean);
  return g;
}

Graph group_norm_channels_last(const GroupNormShape& s, DType dtype) {
  if (s.groups < 1 || s.c % s.groups != 0)
    throw std::invalid_argument("group_norm_channels_last: the channels must split into whole groups");
  Graph g;
  const Dims dims = {s.n, s.hw, s.c};
  const Dims view = {s.n, s.hw, s.groups, s.c / s.groups};
  auto in_f32 = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, DType::kF32) : v; };
  const DType compute = low_precision(dtype) ? DType::kF32 : dtype;
  const ValueId x = in_f32(build_input(g, "x", dtype, dims));
  const ValueId gamma = in_f32(build_input(g, "gamma", dtype, {s.c}));
  const ValueId beta = in_f32(build_input(g, "beta", dtype, {s.c}));
  const ValueId xv = build_reshape(g, x, view);
  const std::vector<int64_t> axes = {1, 3};
  const ValueId mean = build_reduce(g, OpKind::kReduceMean, xv, axes, true);
  const ValueId xc = build_binary(g, OpKind::kSub, xv, build_broadcast(g, mean, view));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), axes, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, compute, 1e-5), {s.n, 1, s.groups, 1});
  const ValueId rstd = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
  const ValueId xhat =
      build_reshape(g, build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, view)), dims);
  const ValueId y =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, build_broadcast(g, gamma, dims)),
                   build_broadcast(g, beta, dims));
  build_output(g, "y", low_precision(dtype) ? build_cast(g, y, dtype) : y);
  return g;
}

Graph batch_norm_training(const Dims& nchw, DType dtype) {
  if (nchw.size() != 4) throw std::invalid_argument("batch_norm_training takes [n, c, h, w]");
  Graph g;
  const int64_t c = nchw[1];
  auto in_f32 = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, DType::kF32) : v; };
  auto out = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, dtype) : v; };
  const DType compute = low_precision(dtype) ? DType::kF32 : dtype;
  const ValueId x = in_f32(build_input(g, "x", dtype, nchw));
  const ValueId gamma = in_f32(build_input(g, "gamma", dtype, {c, 1, 1}));
  const ValueId beta = in_f32(build_input(g, "beta", dtype, {c, 1, 1}));
  const std::vector<int64_t> axes = {0, 2, 3};
  const ValueId mean = build_reduce(g, OpKind::kReduceMean, x, axes, true);
  const ValueId xc = build_binary(g, OpKind::kSub, x, build_broadcast(g, mean, nchw));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), axes, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, compute, 1e-5), {1, c, 1, 1});
  const ValueId rstd = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
  const ValueId xhat = build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, nchw));
  const ValueId y =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, build_broadcast(g, gamma, nchw)),
                   build_broadcast(g, beta, nchw));
  build_output(g, "y", out(y));
  build_output(g, "mean", out(mean));
  build_output(g, "var", out(var));
  return g;
}

namespace {

// Input x [rows, cols] (16-bit inputs cast to f32) and y = its softmax over each row.
struct RowSoftmax {
  ValueId x;
  ValueId y;
};
RowSoftmax row_softmax_of_input(Graph& g, const Dims& dims, DType dtype) {
  const ValueId input = build_input(g, "x", dtype, dims);
  const ValueId x = low_precision(dtype) ? build_cast(g, input, DType::kF32) : input;
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {1}, true), dims);
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, max));
  const ValueId row_sum = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), dims);
  return {x, build_binary(g, OpKind::kDiv, e, row_sum)};
}

}  // namespace

Graph sinkhorn_step(int64_t rows, int64_t cols, DType dtype, SinkhornForm form) {
  Graph g;
  const Dims dims = {rows, cols};
  const auto [x, y] = row_softmax_of_input(g, dims, dtype);
  const ValueId column_sum = build_reduce(g, OpKind::kReduceSum, y, {0}, true);
  const ValueId scaled =
      form == SinkhornForm::kInputScaled || form == SinkhornForm::kInputRowsNormalizedAgain ? x : y;
  ValueId z = build_binary(g, OpKind::kDiv, scaled, build_broadcast(g, column_sum, dims));
  if (form == SinkhornForm::kReciprocal) {
    const ValueId one =
        build_broadcast(g, build_constant_f64(g, g.node(y).dtype, 1.0), g.node(column_sum).dims);
    const ValueId inverse = build_binary(g, OpKind::kDiv, one, column_sum);
    z = build_binary(g, OpKind::kMul, y, build_broadcast(g, inverse, dims));
  }
  if (form == SinkhornForm::kPlusInput) z = build_binary(g, OpKind::kAdd, z, x);
  if (form == SinkhornForm::kRowsNormalizedAgain || form == SinkhornForm::kInputRowsNormalizedAgain)
    z = build_binary(g, OpKind::kDiv, z,
                     build_broadcast(g, build_reduce(g, OpKind::kReduceSum, z, {1}, true), dims));
  auto out = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, dtype) : v; };
  build_output(g, "z", out(z));
  if (form == SinkhornForm::kWithSoftmaxAndSums) {
    build_output(g, "y", out(y));
    build_output(g, "column_sum", column_sum);
  }
  return g;
}

Graph sinkhorn_iterations(int64_t rows, int64_t cols, DType dtype, int iterations, SinkhornOutputs outputs,
                          SinkhornDividend dividend) {
  Graph g;
  const Dims dims = {rows, cols};
  const RowSoftmax softmax = row_softmax_of_input(g, dims, dtype);
  const ValueId x = softmax.x;
  ValueId z = softmax.y;
  // kInput: the sums of |z| plus one, so that no divisor of the signed x nears zero.
  const bool divides_input = dividend == SinkhornDividend::kInput;
  auto sums = [&](ValueId v, int64_t axis) {
    const ValueId s = build_reduce(g, OpKind::kReduceSum, divides_input ? build_unary(g, OpKind::kAbs, v) : v,
                                   {axis}, true);
    if (!divides_input) return s;
    const Dims& d = g.node(s).dims;
    return build_binary(g, OpKind::kAdd, s,
                        build_broadcast(g, build_constant_f64(g, g.node(s).dtype, 1.0), d));
  };
  for (int i = 0; i < iterations; ++i) {
    z = build_binary(g, OpKind::kDiv, divides_input ? x : z, build_broadcast(g, sums(z, 0), dims));
    z = build_binary(g, OpKind::kDiv, z, build_broadcast(g, sums(z, 1), dims));
  }
  build_output(g, "z", low_precision(dtype) ? build_cast(g, z, dtype) : z);
  if (outputs == SinkhornOutputs::kSumsOut)
    build_output(g, "column_sum", build_reduce(g, OpKind::kReduceSum, z, {0}, true));
  return g;
}

Graph instance_norm(const Dims& nchw, DType dtype) {
  if (nchw.size() != 4) throw std::invalid_argument("instance_norm takes [n, c, h, w]");
  Graph g;
  const int64_t c = nchw[1];
  auto in_f32 = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, DType::kF32) : v; };
  const DType compute = low_precision(dtype) ? DType::kF32 : dtype;
  const ValueId x = in_f32(build_input(g, "x", dtype, nchw));
  const ValueId gamma = in_f32(build_input(g, "gamma", dtype, {c, 1, 1}));
  const ValueId beta = in_f32(build_input(g, "beta", dtype, {c, 1, 1}));
  const std::vector<int64_t> axes = {2, 3};
  const ValueId mean = build_reduce(g, OpKind::kReduceMean, x, axes, true);
  const ValueId xc = build_binary(g, OpKind::kSub, x, build_broadcast(g, mean, nchw));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), axes, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, compute, 1e-5), {nchw[0], c, 1, 1});
  const ValueId rstd = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
  const ValueId xhat = build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, nchw));
  const ValueId y =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, build_broadcast(g, gamma, nchw)),
                   build_broadcast(g, beta, nchw));
  build_output(g, "y", low_precision(dtype) ? build_cast(g, y, dtype) : y);
  return g;
}

Graph batch_norm_backward(const Dims& nchw, DType dtype) {
  if (nchw.size() != 4) throw std::invalid_argument("batch_norm_backward takes [n, c, h, w]");
  Graph g;
  const int64_t c = nchw[1];
  const Dims stats = {1, c, 1, 1};
  auto in_f32 = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, DType::kF32) : v; };
  auto out = [&](ValueId v) { return low_precision(dtype) ? build_cast(g, v, dtype) : v; };
  const ValueId x = in_f32(build_input(g, "x", dtype, nchw));
  const ValueId dy = in_f32(build_input(g, "dy", dtype, nchw));
  const ValueId mean = in_f32(build_input(g, "mean", dtype, stats));
  const ValueId rstd = in_f32(build_input(g, "rstd", dtype, stats));
  const ValueId gamma = in_f32(build_input(g, "gamma", dtype, {c, 1, 1}));
  const std::vector<int64_t> axes = {0, 2, 3};
  auto spread = [&](ValueId v) { return build_broadcast(g, v, nchw); };
  const ValueId xhat =
      build_binary(g, OpKind::kMul, build_binary(g, OpKind::kSub, x, spread(mean)), spread(rstd));
  const ValueId dy_xhat = build_binary(g, OpKind::kMul, dy, xhat);
  const ValueId inner = build_binary(
      g, OpKind::kSub,
      build_binary(g, OpKind::kSub, dy, spread(build_reduce(g, OpKind::kReduceMean, dy, axes, true))),
      build_binary(g, OpKind::kMul, xhat, spread(build_reduce(g, OpKind::kReduceMean, dy_xhat, axes, true))));
  const ValueId scale = build_binary(g, OpKind::kMul, rstd, build_reshape(g, gamma, stats));
  build_output(g, "dx", out(build_binary(g, OpKind::kMul, inner, spread(scale))));
  build_output(g, "dgamma", out(build_reduce(g, OpKind::kReduceSum, dy_xhat, axes, false)));
  build_output(g, "dbeta", out(build_reduce(g, OpKind::kReduceSum, dy, axes, false)));
  return g;
}

namespace {

// A graph of [rows, cols] named `name` at benchmark shape `dims`, built by `build`.
ShapedGraph two_dimensional(const std::string& name, Dims dims, Graph (*build)(int64_t, int64_t, DType)) {
  return {name, std::move(dims), {256, 1024}, [name, build](const Dims& d, DType dtype) {
            if (d.size() != 2) throw std::invalid_argument(name + " takes [rows, cols]");
            return build(d[0], d[1], dtype);
          }};
}

}  // namespace

const std::vector<ShapedGraph>& reduction_graphs() {
  static const std::vector<ShapedGraph> graphs = {
      two_dimensional("bias_grad_column_sum", {8192, 1024}, bias_grad_column_sum),
      {"middle_axis_sum",
       {64, 4096, 64},
       {8, 256, 64},
       [](const Dims& dims, DType dtype) {
         if (dims.size() != 3) throw std::invalid_argument("middle_axis_sum takes [outer, middle, inner]");
         return middle_axis_sum(dims[0], dims[1], dims[2], dtype);
       }},
      two_dimensional("column_softmax", {4096, 1024}, column_softmax),
      // Beyond the device's registers: the chunks are kept in shared memory.
      two_dimensional("column_softmax_large", {16384, 768}, column_softmax),
      two_dimensional("layer_norm_backward", {8192, 1024}, layer_norm_backward),
      two_dimensional("rms_norm_backward", {8192, 1024}, rms_norm_backward),
      {"group_norm",
       {8, 512, 4096},
       {8, 256, 64},
       [](const Dims& dims, DType dtype) {
         if (dims.size() != 3) throw std::invalid_argument("group_norm takes [n, channels, hw]");
         return group_norm({dims[0], dims[1], dims[2], kBenchmarkGroups}, dtype);
       }},
      {"batch_norm", {32, 64, 56, 56}, {4, 16, 8, 8}, batch_norm_training},
      {"instance_norm", {32, 64, 56, 56}, {2, 8, 28, 28}, instance_norm},
      {"sinkhorn_step",
       {4096, 1024},
       {256, 1024},
       [](const Dims& dims, DType dtype) { return sinkhorn_step(dims[0], dims[1], dtype); }},
      {"sinkhorn_iteration",
       {4096, 1024},
       {256, 1024},
       [](const Dims& dims, DType dtype) {
         return sinkhorn_step(dims[0], dims[1], dtype, SinkhornForm::kRowsNormalizedAgain);
       }},
      {"sinkhorn_two_iterations",
       {4096, 1024},
       {256, 1024},
       [](const Dims& dims, DType dtype) { return sinkhorn_iterations(dims[0], dims[1], dtype, 2); }},
  };
  return graphs;
}

namespace {

ValueId row_mean(Graph& g, ValueId x, const Dims& dims) {
  return build_broadcast(g, build_reduce(g, OpKind::kReduceMean, x, {1}, true), dims);
}

}  // namespace

void add_layer_norm_backward(Graph& g, int64_t rows, int64_t cols, DType dtype, const std::string& suffix) {
  const Dims dims = {rows, cols};
  const ValueId x = build_input(g, "x" + suffix, dtype, dims);
  const ValueId dy = build_input(g, "dy" + suffix, dtype, dims);
  const ValueId w = build_input(g, "w" + suffix, dtype, {cols});
  const ValueId xc = build_binary(g, OpKind::kSub, x, row_mean(g, x, dims));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), {1}, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, dtype, 1e-5), {rows, 1});
  const ValueId rstd =
      build_broadcast(g, build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps)), dims);
  const ValueId xhat = build_binary(g, OpKind::kMul, xc, rstd);
  const ValueId gw = build_binary(g, OpKind::kMul, dy, build_broadcast(g, w, dims));
  const ValueId inner = build_binary(
      g, OpKind::kSub, build_binary(g, OpKind::kSub, gw, row_mean(g, gw, dims)),
      build_binary(g, OpKind::kMul, xhat, row_mean(g, build_binary(g, OpKind::kMul, gw, xhat), dims)));
  build_output(g, "dx" + suffix, build_binary(g, OpKind::kMul, rstd, inner));
  build_output(g, "dgamma" + suffix,
               build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, dy, xhat), {0}, false));
  build_output(g, "dbeta" + suffix, build_reduce(g, OpKind::kReduceSum, dy, {0}, false));
}

Graph layer_norm_backward(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  add_layer_norm_backward(g, rows, cols, dtype, "");
  return g;
}

Graph rms_norm_backward(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const Dims dims = {rows, cols};
  const ValueId x = build_input(g, "x", dtype, dims);
  const ValueId dy = build_input(g, "dy", dtype, dims);
  const ValueId w = build_input(g, "w", dtype, {cols});
  const ValueId ms = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, x, x), {1}, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, dtype, 1e-6), {rows, 1});
  const ValueId rstd =
      build_broadcast(g, build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, ms, eps)), dims);
  const ValueId xhat = build_binary(g, OpKind::kMul, x, rstd);
  const ValueId gw = build_binary(g, OpKind::kMul, dy, build_broadcast(g, w, dims));
  const ValueId dot = row_mean(g, build_binary(g, OpKind::kMul, gw, xhat), dims);
  build_output(g, "dx",
               build_binary(g, OpKind::kMul, rstd,
                            build_binary(g, OpKind::kSub, gw, build_binary(g, OpKind::kMul, xhat, dot))));
  build_output(g, "dgamma",
               build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, dy, xhat), {0}, true));
  return g;
}

}  // namespace fstitch::testing
