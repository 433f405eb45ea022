// The reference evaluator: the oracle every backend is checked against. Each operation is
// computed in float64 (integers in int64), rounded to its dtype; reductions accumulate in
// float64.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// One opaque operation for the evaluator to run: its operands and its result as dense
// row-major host buffers in their storage dtypes. The result buffer is filled with 0xff bytes
// (NaN for floats) beforehand, so elements the runner leaves unwritten show.
struct OpaqueInvocation {
  ValueId op;
  std::vector<const void*> operands;
  void* result;
};
// Runs one opaque operation; reports failure by throwing fstitch::Error.
using OpaqueRunner = std::function<void(const OpaqueInvocation&)>;

// inputs[i] is a dense row-major buffer for graph.inputs()[i]; outputs[i] for
// graph.outputs()[i]. The graph must verify. Opaque operations run through `run_opaque`;
// without one (nullptr) a graph with opaque operations throws kUnsupported before any work.
// Throws kOutOfMemory before any work when the intermediates alive at once (8 bytes per
// element) would exceed `memory_limit_bytes` (by default this machine's physical memory).
void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs, const OpaqueRunner* run_opaque = nullptr);
void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs, uint64_t memory_limit_bytes,
                        const OpaqueRunner* run_opaque = nullptr);

// This machine's physical memory in bytes (the default limit above).
uint64_t physical_memory_bytes();

}  // namespace fstitch
