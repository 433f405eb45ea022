// The reference evaluator: the oracle every backend is checked against. Each operation is
// computed in float64 (integers in int64), rounded to its dtype; reductions accumulate in
// float64.
#pragma once

#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// inputs[i] is a dense row-major buffer for graph.inputs()[i]; outputs[i] for
// graph.outputs()[i]. The graph must verify. Throws kUnsupported for opaque operations.
void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs);

}  // namespace fstitch
