// The graph text format (see docs/text-format.md): print and parse, round-trip exact.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.hpp"

namespace fstitch {

// The version written in the header line "fstitch.graph 1"; the only one the parser reads.
constexpr int kTextFormatVersion = 1;

// Prints every value, input and output. Deterministic.
std::string print_graph(const Graph& graph);

// Parses text produced by print_graph (or written by hand). Throws Error with kParse for
// syntax errors and with the type-check status for operations that do not type-check; both
// messages begin with "line L, column C: ".
Graph parse_graph(std::string_view text);

}  // namespace fstitch
