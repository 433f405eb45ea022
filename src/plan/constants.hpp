// Tensor constants in a plan: they live in memory the fusion owns (its copy of their data on
// the host backend, a device copy per CUDA context on the CUDA backend), so kernels load them
// through a parameter of kind ParamKind::kConstant, as they load graph inputs.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// Whether v is in memory before any step of a run: a graph input or a tensor constant. Such a
// value is never computed by a kernel; an output that names it gets a copy kernel.
inline bool in_memory_before_run(const Graph& graph, ValueId v) {
  const OpKind op = graph.node(v).op;
  return op == OpKind::kInput || op == OpKind::kTensor;
}

// The tensor constants a plan needs (those that are live), in graph order: the index of a
// constant in this list is its FST_PARAM_CONSTANT index.
std::vector<ValueId> plan_constants(const Graph& graph, const std::vector<bool>& live);

// The index of `v` in `constants` (plan_constants), or nullopt when v is none of them.
std::optional<size_t> constant_index(const std::vector<ValueId>& constants, ValueId v);

}  // namespace fstitch
