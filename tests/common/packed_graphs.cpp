#include "common/packed_graphs.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

ValueId to_f32(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF32 ? x : build_cast(g, x, DType::kF32);
}
ValueId to_storage(Graph& g, ValueId x, DType dtype) {
  return dtype == DType::kF32 ? x : build_cast(g, x, dtype);
}
ValueId scalar(Graph& g, double value) {
  return build_constant_f64(g, DType::kF32, value);
}

}  // namespace

Graph independent_layer_norms(const std::vector<std::pair<int64_t, int64_t>>& shapes, DType dtype) {
  Graph g;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [rows, cols] = shapes[i];
    const std::string n = std::to_string(i);
    ValueId x = to_f32(g, build_input(g, "x" + n, dtype, {rows, cols}), dtype);
    ValueId gamma = to_f32(g, build_input(g, "gamma" + n, dtype, {cols}), dtype);
    ValueId beta = to_f32(g, build_input(g, "beta" + n, dtype, {cols}), dtype);
    ValueId mean = build_reduce(g, OpKind::kReduceMean, x, {-1}, true);
    ValueId centered = build_binary(g, OpKind::kSub, x, mean);
    ValueId var =
        build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, centered, centered), {-1}, true);
    ValueId xhat =
        build_binary(g, OpKind::kMul, centered,
                     build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, scalar(g, 1e-5))));
    ValueId y = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, gamma), beta);
    build_output(g, "y" + n, to_storage(g, y, dtype));
  }
  return g;
}

namespace {

// One tensor's Adam moments and its decoupled-weight-decay update (betas 0.9 and 0.999, step
// 10, weight decay 0.01) from inputs p<n>, g<n>, m<n> and v<n> (p and g in `dtype`, the moments
// in f32); the caller scales the update and writes the outputs.
struct AdamTensor {
  ValueId p, m_next, v_next, update;
};
AdamTensor adam_update(Graph& g, const std::string& n, int64_t size, DType dtype, double eps) {
  const double beta1 = 0.9, beta2 = 0.999, decay = 0.01;
  const int step = 10;
  const double correction1 = 1 - std::pow(beta1, step), correction2 = 1 - std::pow(beta2, step);
  const Dims dims = {size};
  AdamTensor t;
  t.p = to_f32(g, build_input(g, "p" + n, dtype, dims), dtype);
  ValueId grad = to_f32(g, build_input(g, "g" + n, dtype, dims), dtype);
  ValueId m = build_input(g, "m" + n, DType::kF32, dims);
  // The second moment is never negative: its magnitude, whatever values a test fills in.
  ValueId v = build_unary(g, OpKind::kAbs, build_input(g, "v" + n, DType::kF32, dims));
  t.m_next = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, m, scalar(g, beta1)),
                          build_binary(g, OpKind::kMul, grad, scalar(g, 1 - beta1)));
  t.v_next = build_binary(
      g, OpKind::kAdd, build_binary(g, OpKind::kMul, v, scalar(g, beta2)),
      build_binary(g, OpKind::kMul, build_binary(g, OpKind::kMul, grad, grad), scalar(g, 1 - beta2)));
  ValueId denominator = build_binary(
      g, OpKind::kAdd,
      build_unary(g, OpKind::kSqrt, build_binary(g, OpKind::kDiv, t.v_next, scalar(g, correction2))),
      scalar(g, eps));
  t.update =
      build_binary(g, OpKind::kAdd,
                   build_binary(g, OpKind::kDiv,
                                build_binary(g, OpKind::kDiv, t.m_next, scalar(g, correction1)), denominator),
                   build_binary(g, OpKind::kMul, t.p, scalar(g, decay)));
  return t;
}

void add_optimizer_outputs(Graph& g, const std::string& n, const AdamTensor& t, ValueId p_next, DType dtype) {
  build_output(g, "p" + n + "_next", to_storage(g, p_next, dtype));
  build_output(g, "m" + n + "_next", t.m_next);
  build_output(g, "v" + n + "_next", t.v_next);
}

}  // namespace

Graph adamw_step(const std::vector<int64_t>& sizes, DType dtype) {
  const double lr = 1e-3;
  Graph g;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string n = std::to_string(i);
    const AdamTensor t = adam_update(g, n, sizes[i], dtype, 1e-8);
    ValueId p_next =
        build_binary(g, OpKind::kSub, t.p, build_binary(g, OpKind::kMul, t.update, scalar(g, lr)));
    add_optimizer_outputs(g, n, t, p_next, dtype);
  }
  return g;
}

Graph lamb_step(const std::vector<int64_t>& sizes, DType dtype) {
  const double lr = 1e-3;
  Graph g;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string n = std::to_string(i);
    const AdamTensor t = adam_update(g, n, sizes[i], dtype, 1e-6);
    auto norm = [&](ValueId x) {
      return build_unary(g, OpKind::kSqrt,
                         build_reduce(g, OpKind::kReduceSum, build_binary(g, OpKind::kMul, x, x), {0}, true));
    };
    ValueId p_norm = norm(t.p), u_norm = norm(t.update);
    ValueId zero = scalar(g, 0.0);
    ValueId both = build_binary(g, OpKind::kLogicalAnd, build_binary(g, OpKind::kGt, p_norm, zero),
                                build_binary(g, OpKind::kGt, u_norm, zero));
    ValueId ratio = build_select(g, both, build_binary(g, OpKind::kDiv, p_norm, u_norm), scalar(g, 1.0));
    ValueId p_next = build_binary(
        g, OpKind::kSub, t.p,
        build_binary(g, OpKind::kMul, t.update, build_binary(g, OpKind::kMul, ratio, scalar(g, lr))));
    add_optimizer_outputs(g, n, t, p_next, dtype);
  }
  return g;
}

std::vector<int64_t> transformer_parameter_sizes(int64_t tensors) {
  constexpr int64_t kCycle[] = {768 * 768, 768, 3072, 4 * 3072};
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < tensors; ++i) sizes.push_back(kCycle[i % 4]);
  return sizes;
}

const std::vector<ShapedGraph>& optimizer_graphs() {
  static const std::vector<ShapedGraph> graphs = {
      {"adamw_step",
       {100},
       {3},
       [](const Dims& dims, DType dtype) {
         if (dims.size() != 1 || dims[0] < 1) throw std::invalid_argument("adamw_step takes {tensor count}");
         return adamw_step(transformer_parameter_sizes(dims[0]), dtype);
       },
       {DType::kF32}},
      {"lamb_step",
       {100},
       {3},
       [](const Dims& dims, DType dtype) {
         if (dims.size() != 1 || dims[0] < 1) throw std::invalid_argument("lamb_step takes {tensor count}");
         return lamb_step(transformer_parameter_sizes(dims[0]), dtype);
       },
       {DType::kF32}},
  };
  return graphs;
}

}  // namespace fstitch::testing
