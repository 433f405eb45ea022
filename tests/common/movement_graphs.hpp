// Graphs built around the data-movement operations (slice, concat, pad, take, split) the way
// transformers use them. Shared by the planner tests, the differential tests and the NVRTC
// compile tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

// LLaMA's rotary embedding: x * cos + cat(-x[..., d/2:], x[..., :d/2]) * sin.
Graph rotate_half(int64_t rows, int64_t cols, DType dtype);
// GPT-2's attention input: q, k, v = split(qkv, 3 sections along the last axis), each
// feeding elementwise operations.
Graph qkv_split(int64_t rows, int64_t cols, DType dtype);

struct MovementGraph {
  std::string name;
  std::function<Graph(int64_t rows, int64_t cols, DType dtype)> build;
};

// rotate_half, qkv_split and graphs that cover every movement operation: strided and
// negative-bound slices, concat of several operands, pads feeding a row reduction, take
// along each axis with in-range, negative and out-of-range indices (i32 and i64), a permute
// after a row reduction.
const std::vector<MovementGraph>& movement_graphs();

}  // namespace fstitch::testing
