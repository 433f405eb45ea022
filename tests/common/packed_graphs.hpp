// Graphs of independent subgraphs, the cases horizontal packing is for: several
// normalizations over tensors of their own shapes, and a multi-tensor optimizer step. Shared
// by the planner and differential tests and the static kernel report.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/shaped_graph.hpp"
#include "ir/graph.hpp"

namespace fstitch::testing {

// One LayerNorm per shape (rows, cols), each over its own x_i, gamma_i and beta_i, output y_i.
Graph independent_layer_norms(const std::vector<std::pair<int64_t, int64_t>>& shapes, DType dtype);

// One AdamW step (lr 1e-3, betas 0.9 and 0.999, eps 1e-8, weight decay 0.01, step 10) over
// parameter tensors of the given element counts: inputs p_i, g_i, m_i, v_i (read as |v_i|, so
// any test data is a valid second moment); outputs p_i', m_i' and v_i', each of which may
// update its input in place. p and g in `dtype`, the moments in f32.
Graph adamw_step(const std::vector<int64_t>& sizes, DType dtype);

// One LAMB step (lr 1e-3, betas 0.9 and 0.999, eps 1e-6, weight decay 0.01, step 10) over
// parameter tensors of the given element counts: per tensor, the AdamW-like update u from the
// new moments, then the trust ratio |p| / |u| (the norms over the whole tensor; 1 where either
// is 0) scales the step: p' = p - lr * ratio * u. Inputs p_i, g_i, m_i, v_i (v read as |v_i|),
// outputs p_i', m_i', v_i'; p and g in `dtype`, the moments in f32. Each tensor is one row
// reduced whole, then used again elementwise.
Graph lamb_step(const std::vector<int64_t>& sizes, DType dtype);

// The element counts of `tensors` parameter tensors of a BERT-base-sized transformer layer,
// cycling through 768x768, 768, 3072 and 4x3072: the multi-tensor optimizer's mix of sizes.
std::vector<int64_t> transformer_parameter_sizes(int64_t tensors);

// adamw_step and lamb_step over transformer_parameter_sizes(dims[0]): dims is {tensor count},
// 100 in the benchmarks (15,148,800 elements) and 3 in the GPU benchmark's --check mode; f32
// only, the dtype in which torch's optimizers, the baselines, move the same bytes.
const std::vector<ShapedGraph>& optimizer_graphs();

}  // namespace fstitch::testing
