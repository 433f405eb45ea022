// The reference evaluator: the oracle every backend is checked against. Each operation is
// computed in float64 (integers in int64), rounded to its dtype; reductions accumulate in
// float64.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// inputs[i] is a dense row-major buffer for graph.inputs()[i]; outputs[i] for
// graph.outputs()[i]. The graph must verify. Throws kUnsupported for opaque operations, and
// kOutOfMemory before any work when the intermediates alive at once (8 bytes per element)
// would exceed `memory_limit_bytes` (by default this machine's physical memory).
void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs);
void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs, uint64_t memory_limit_bytes);

// This machine's physical memory in bytes (the default limit above).
uint64_t physical_memory_bytes();

}  // namespace fstitch
