// The object behind fst_opaque_call: one opaque operation's buffers for the caller's
// callback, in a fused run or a reference evaluation, and how a callback's failure becomes
// the run's error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fstitch.h"
#include "ir/graph.hpp"

struct fst_opaque_call {
  const fstitch::Graph* graph = nullptr;
  fstitch::ValueId op = 0;
  uint32_t graph_serial = 0;  // the high bits of the fst_values of the graph behind `graph`
  std::vector<const void*> operands;
  void* result = nullptr;
  void* stream = nullptr;
  mutable std::string failure;  // set by fst_opaque_call_fail
};

namespace fstitch::api {

// The caller's callback for opaque operations; a null callback means there is none.
struct OpaqueCallback {
  fst_opaque_callback function = nullptr;
  void* user_data = nullptr;
};

// Calls the callback for `call`; throws Error with the callback's status (and its message)
// when the callback fails.
void invoke_opaque(const OpaqueCallback& callback, const fst_opaque_call& call);

// Throws invalid argument when a graph with opaque operations gets no callback.
void require_callback_for(const Graph& graph, const std::vector<ValueId>& opaque_ops,
                          const OpaqueCallback& callback);

}  // namespace fstitch::api
