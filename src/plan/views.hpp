// Views are free: a reshape, or a permute that keeps the memory order, of a value that is in
// memory anyway reads that value's buffer. No kernel exists to copy such a view for an opaque
// operation or an output: the operation reads the root's buffer, and the kernel producing the
// root writes an output view's buffer itself.
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// Whether `v` is a reshape or a permute that moves only axes of extent 1: its elements are
// its operand's, in the same memory order.
bool is_view_op(const Graph& graph, ValueId v);

// Per value, the root whose buffer it reads when it is a free view, else -1. A view is free
// when it must be in memory (an opaque operation reads it, or it is an output) or all its
// users are free views (under policy none: always, as every value is then in memory), and
// its root is in memory anyway (an input, an opaque result, or a
// value a kernel computes; never an inlined value). An output that views a graph input or
// a scalar constant is not free: it needs a buffer of its own, so a kernel copies it.
// Needs in.live, in.users, in.graph_output and in.inlined.
std::vector<ValueId> find_view_roots(const Graph& graph, const PlanInputs& in);

}  // namespace fstitch
