#include "plan/views.hpp"

namespace fstitch {

bool is_view_op(const Graph& graph, ValueId v) {
  const Node& n = graph.node(v);
  if (n.op == OpKind::kReshape) return true;
  if (n.op != OpKind::kPermute) return false;
  // Axes of extent > 1 must keep their relative order.
  const Dims& from = graph.node(n.operands[0]).dims;
  int64_t last = -1;
  for (int64_t axis : n.axes) {
    if (from[static_cast<size_t>(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

std::vector<ValueId> find_view_roots(const Graph& graph, const PlanInputs& in) {
  const size_t n = graph.size();
  // Users come after their operands: one pass from the end decides which views want to be
  // free (they need memory, or serve only views that do).
  std::vector<bool> wanted(n, false);
  for (size_t i = n; i-- > 0;) {
    const auto v = static_cast<ValueId>(i);
    if (!in.live[i] || !is_view_op(graph, v)) continue;
    bool needs_memory = in.graph_output[i];
    bool only_views = !in.users[i].empty();
    for (ValueId u : in.users[i]) {
      needs_memory = needs_memory || graph.node(u).op == OpKind::kOpaque;
      only_views = only_views && wanted[static_cast<size_t>(u)];
    }
    // With one operation per kernel everything is in memory: a view is never worth a kernel.
    wanted[i] = needs_memory || only_views || in.policy == FusionPolicy::kNone;
  }
  // Then, in id order, each wanted view whose root is in memory becomes free.
  std::vector<ValueId> root(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (!wanted[i]) continue;
    const ValueId base = graph.node(static_cast<ValueId>(i)).operands[0];
    const ValueId r = root[static_cast<size_t>(base)] >= 0 ? root[static_cast<size_t>(base)] : base;
    const OpKind root_op = graph.node(r).op;
    if (in.inlined[static_cast<size_t>(r)] || root_op == OpKind::kConstant) continue;
    if (in.graph_output[i] && (root_op == OpKind::kInput || root_op == OpKind::kTensor)) continue;
    root[i] = r;
  }
  return root;
}

}  // namespace fstitch
