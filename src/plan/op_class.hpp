// Operation classes as the planner sees them (FusionStitching's codegen classes).
#pragma once

#include "ir/graph.hpp"

namespace fstitch {

enum class OpClass : uint8_t {
  kSource,                // input, constant, iota: produce values without reading any
  kLightElementwise,      // add, mul, cast, select, compare...
  kExpensiveElementwise,  // exp, log, tanh, erf, pow, gelu...: not worth recomputing across a fan-out
  kBroadcast,
  kLayout,           // reshape, permute, slice, concat, pad, take: index maps
  kRowReduction,     // reduces the innermost axes
  kColumnReduction,  // reduces other axes
  kOpaque,           // not fused (matmul...)
};

OpClass classify(const Graph& graph, ValueId id);
const char* op_class_name(OpClass c);
// Relative arithmetic cost of one element of the op (1 for a light op).
double op_compute_weight(OpKind kind);

}  // namespace fstitch
