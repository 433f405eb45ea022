#include "plan/steps.hpp"

#include <algorithm>
#include <string>

#include "support/error.hpp"

namespace fstitch {
namespace {

// Which step produces each value: the kernel that stores it or the opaque operation that
// computes it (graph inputs have no step).
struct Producers {
  std::vector<int> kernel;  // kernel index, -1 for none
  std::vector<bool> opaque;
};

Producers find_producers(const Graph& graph, const FusionPlan& plan) {
  Producers p{std::vector<int>(graph.size(), -1), std::vector<bool>(graph.size(), false)};
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (ValueId v : plan.kernels[k].spec.stored) {
      // A copy kernel (no members) produces only a constant: an input or opaque result it
      // copies to another output is in memory before it runs.
      const bool copied_home = !plan.kernels[k].spec.is_member(v) && graph.node(v).op != OpKind::kConstant;
      if (!copied_home) p.kernel[static_cast<size_t>(v)] = static_cast<int>(k);
    }
  }
  for (ValueId op : plan.opaque_ops) p.opaque[static_cast<size_t>(op)] = true;
  return p;
}

std::string step_text(const Graph& graph, const FusionPlan& plan, const PlanStep& step) {
  if (step.kind == StepKind::kKernel) return "kernel " + plan.kernels[step.index].name;
  const ValueId op = plan.opaque_ops[step.index];
  return "opaque operation \"" + graph.node(op).name + "\" (%" + std::to_string(op) + ")";
}

}  // namespace

std::vector<PlanStep> order_steps(const Graph& graph, const FusionPlan& plan) {
  const Producers producers = find_producers(graph, plan);
  // after[i]: how many kernels must run before opaque operation i. Operands are earlier
  // values, so one pass in id order sees an opaque operand's own position first.
  std::vector<size_t> after(plan.opaque_ops.size(), 0);
  std::vector<size_t> opaque_after(graph.size(), 0);
  for (size_t i = 0; i < plan.opaque_ops.size(); ++i) {
    for (ValueId operand : graph.node(plan.opaque_ops[i]).operands) {
      const auto o = static_cast<size_t>(storage_of(plan, operand));  // a free view reads its root
      if (producers.kernel[o] >= 0)
        after[i] = std::max(after[i], static_cast<size_t>(producers.kernel[o]) + 1);
      if (producers.opaque[o]) after[i] = std::max(after[i], opaque_after[o]);
    }
    opaque_after[static_cast<size_t>(plan.opaque_ops[i])] = after[i];
  }
  std::vector<PlanStep> steps;
  size_t next_opaque = 0;
  std::vector<size_t> order(plan.opaque_ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Stable: opaque operations that become ready together keep their id order, which puts an
  // opaque operand before the operation reading it.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return after[a] < after[b]; });
  for (size_t k = 0; k <= plan.kernels.size(); ++k) {
    while (next_opaque < order.size() && after[order[next_opaque]] == k) {
      steps.push_back({StepKind::kOpaque, order[next_opaque++]});
    }
    if (k < plan.kernels.size()) steps.push_back({StepKind::kKernel, k});
  }
  check_steps(graph, plan, steps);
  return steps;
}

void check_steps(const Graph& graph, const FusionPlan& plan, const std::vector<PlanStep>& steps) {
  std::vector<bool> exists(graph.size(), false);
  for (ValueId v : graph.inputs()) exists[static_cast<size_t>(v)] = true;
  for (ValueId v : plan.constants) exists[static_cast<size_t>(v)] = true;
  std::vector<bool> kernel_done(plan.kernels.size(), false), opaque_done(plan.opaque_ops.size(), false);
  auto require = [&](const PlanStep& step, ValueId v) {
    if (exists[static_cast<size_t>(storage_of(plan, v))]) return;
    fail(StatusCode::kInternal, "the plan's steps are out of order: " + step_text(graph, plan, step) +
                                    " reads %" + std::to_string(v) + " before anything produces it");
  };
  for (const PlanStep& step : steps) {
    std::vector<bool>& done = step.kind == StepKind::kKernel ? kernel_done : opaque_done;
    if (step.index >= done.size() || done[step.index])
      fail(StatusCode::kInternal, "the plan's steps name a kernel or opaque operation twice or not at all");
    done[step.index] = true;
    if (step.kind == StepKind::kKernel) {
      const KernelSpec& spec = plan.kernels[step.index].spec;
      for (ValueId v : spec.loaded) require(step, v);
      for (ValueId v : spec.stored) exists[static_cast<size_t>(v)] = true;
    } else {
      const ValueId op = plan.opaque_ops[step.index];
      for (ValueId v : graph.node(op).operands) require(step, v);
      exists[static_cast<size_t>(op)] = true;
    }
  }
  const bool all = std::all_of(kernel_done.begin(), kernel_done.end(), [](bool b) { return b; }) &&
                   std::all_of(opaque_done.begin(), opaque_done.end(), [](bool b) { return b; });
  if (!all) fail(StatusCode::kInternal, "the plan's steps leave a kernel or opaque operation out");
}

}  // namespace fstitch
