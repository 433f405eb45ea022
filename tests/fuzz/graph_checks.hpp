// Checks of a whole graph shared by the fuzz targets: the text round trip, the reference
// evaluator on fixed inputs, and the limits under which a target evaluates or fuses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "contract.hpp"
#include "fstitch.h"

namespace fstitch::fuzz {

struct GraphDeleter {
  void operator()(fst_graph* g) const { fst_graph_destroy(g); }
};
using GraphPtr = std::unique_ptr<fst_graph, GraphDeleter>;

// The reference evaluator keeps every value as float64 or int64: a graph is evaluated only
// when all its values together hold at most this many elements.
constexpr long long kMaxReferenceElements = 1 << 14;

// The status fst_fuse may give for a valid graph: FST_OK, or FST_ERROR_OUT_OF_MEMORY when its
// values are so large that the workspace could pass 2^62 bytes or the global traffic 2^64
// (docs/API.md, "Size limits"). Graphs whose values, read once by every node, stay below
// 2^62 bytes must fuse.
Expectation fuse_expectation(const fst_graph* graph);

// True for a graph without opaque operations whose values fit kMaxReferenceElements.
bool cheap_to_evaluate(const fst_graph* graph);

// Runs the reference evaluator on inputs derived from a fixed seed (the same for every
// graph with the same input types) and returns each output's bytes. The graph must verify
// and be cheap to evaluate: anything but FST_OK is a violation. Every output byte must be
// written (two runs over differently pre-filled buffers agree).
std::vector<std::vector<unsigned char>> evaluate_on_fixed_inputs(const fst_graph* graph);

// Prints `graph`, parses the text in `context` and prints it again: the parse must succeed,
// the two texts must be equal and the value counts too. Returns the parsed graph.
GraphPtr check_print_round_trip(fst_context* context, const fst_graph* graph);

// Queries every kernel of `fusion` and checks what the documentation promises of each
// (names, sources, launch configurations, parameters within the graph's counts).
void check_fusion_queries(const fst_fusion* fusion, size_t graph_inputs, size_t graph_outputs);

}  // namespace fstitch::fuzz
