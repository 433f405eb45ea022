// Structural verification of a graph: what the builders guarantee, checked again for
// graphs that come from elsewhere (the text parser, later passes).
#pragma once

#include "ir/graph.hpp"

namespace fstitch {

// Throws an Error describing the first violated invariant.
void verify_graph(const Graph& graph);

}  // namespace fstitch
