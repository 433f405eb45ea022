// The canonical memory-intensive graphs, built the way a framework decomposes them. Shared
// by the planner tests, the differential tests and the benchmarks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

struct CanonicalGraph {
  std::string name;
  std::function<Graph(int64_t rows, int64_t cols, DType dtype)> build;
};

Graph layer_norm(int64_t rows, int64_t cols, DType dtype);
Graph softmax_scale_mask(int64_t rows, int64_t cols, DType dtype);
Graph rms_norm(int64_t rows, int64_t cols, DType dtype);
Graph log_softmax(int64_t rows, int64_t cols, DType dtype);
Graph bias_residual_layer_norm(int64_t rows, int64_t cols, DType dtype);
Graph gelu_bias(int64_t rows, int64_t cols, DType dtype);

const std::vector<CanonicalGraph>& canonical_graphs();

}  // namespace fstitch::testing
