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

// Whether the op's f32 result is one add, subtract or multiply instruction. A NaN such an
// instruction gives has the canonical bits 0x7fffffff on the GPU (not an operand's payload),
// so rounding it to bf16 needs no rule to keep a payload: the conversion alone gives the
// canonical bf16 NaN the rule would (fst_round_bf16_arith in codegen/prelude.cpp).
bool result_has_canonical_nan(OpKind kind);

}  // namespace fstitch
