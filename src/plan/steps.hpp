// The order in which a run executes a plan: its kernels in launch order, with each opaque
// operation (run by the caller) placed as soon as every value it reads exists.
#pragma once

#include <vector>

#include "plan/plan.hpp"

namespace fstitch {

// Builds plan.steps from plan.kernels (in launch order) and plan.opaque_ops. Throws
// Error(kInternal) when no valid order exists: a kernel that reads an opaque result before
// everything that operation reads is produced (the planner never builds such a plan).
std::vector<PlanStep> order_steps(const Graph& graph, const FusionPlan& plan);

// Checks that `steps` runs every kernel and opaque operation of `plan` once, each after
// whatever produces the values it reads; throws Error(kInternal) naming the first step
// that would read a value too early.
void check_steps(const Graph& graph, const FusionPlan& plan, const std::vector<PlanStep>& steps);

}  // namespace fstitch
