// CUDA C generation for a fusion plan: one module text holding every kernel.
#pragma once

#include <string>

#include "ir/graph.hpp"
#include "plan/plan.hpp"

namespace fstitch {

// Deterministic: the same plan gives the same text (the compile cache keys on it).
std::string emit_module(const Graph& graph, const FusionPlan& plan);

// One kernel's definition (its entry point named kernel.name), without the prelude.
std::string emit_kernel(const Graph& graph, const PlannedKernel& kernel);

}  // namespace fstitch
