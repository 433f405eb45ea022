#include "plan/gelu_evaluation.hpp"

#include <algorithm>

#include "plan/cost_model.hpp"
#include "ref/gelu_table.hpp"

namespace fstitch {

const char* gelu_evaluation_name(GeluEvaluation e) {
  switch (e) {
    case GeluEvaluation::kPolynomial:
      return "polynomial";
    case GeluEvaluation::kBf16Table:
      return "bf16 table";
  }
  return "?";
}

size_t bf16_gelu_table_bytes() {
  return (ref::bf16_gelu_table().entries.size() + 7) / 8 * 16;
}

bool is_bf16_gelu(const Graph& g, ValueId v) {
  const Node& n = g.node(v);
  return n.op == OpKind::kGelu && n.dtype == DType::kBF16 && g.node(n.operands[0]).dtype == DType::kBF16;
}

bool has_bf16_gelu(const Graph& g, const KernelSpec& s) {
  auto any = [&](const std::vector<ValueId>& values) {
    return std::any_of(values.begin(), values.end(), [&](ValueId v) { return is_bf16_gelu(g, v); });
  };
  return any(s.members) || any(s.inlined);
}

void find_gelu_rounded_to_16bit(const PlanInputs& in, KernelSpec& spec) {
  const Graph& g = *in.graph;
  spec.gelu_to_16bit.clear();
  for (ValueId v : spec.members) {
    const Node& n = g.node(v);
    if (n.op != OpKind::kGelu || n.dtype != DType::kF32) continue;
    if (std::find(spec.stored.begin(), spec.stored.end(), v) != spec.stored.end()) continue;
    const std::vector<ValueId>& users = in.users[static_cast<size_t>(v)];
    const bool rounded = !users.empty() && std::all_of(users.begin(), users.end(), [&](ValueId u) {
      const Node& c = g.node(u);
      return c.op == OpKind::kCast && (c.dtype == DType::kBF16 || c.dtype == DType::kF16) && spec.is_member(u);
    });
    if (rounded) spec.gelu_to_16bit.push_back(v);
  }
  std::sort(spec.gelu_to_16bit.begin(), spec.gelu_to_16bit.end());
}

void choose_gelu_evaluation(const PlanInputs& in, KernelSpec& spec) {
  const Graph& g = *in.graph;
  find_gelu_rounded_to_16bit(in, spec);
  spec.gelu = GeluEvaluation::kPolynomial;
  size_grid(in, spec);
  // Column tiles size their occupancy from their own register model and pass it to ptxas;
  // the table stays out of them.
  if (spec.schedule == ScheduleKind::kColumnTile || !has_bf16_gelu(g, spec)) return;
  const size_t limit = std::min<size_t>(kStaticSharedLimit, in.shared_budget);
  if (spec.dynamic_shared_bytes > 0 || kernel_shared_bytes(g, spec) + bf16_gelu_table_bytes() > limit) return;
  KernelSpec table = spec;
  table.gelu = GeluEvaluation::kBf16Table;
  size_grid(in, table);
  if (estimate_seconds(in, table) < estimate_seconds(in, spec)) spec = std::move(table);
}

}  // namespace fstitch
