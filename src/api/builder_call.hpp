// Runs one graph builder at the C boundary with the sticky first error: shared by the
// builder entry points (api_graph.cpp, api_movement.cpp).
#pragma once

#include "api/handles.hpp"

namespace fstitch::api {

// Runs a builder: refuses a NULL graph or one already in error, records a failure on the
// graph (first error wins) and returns the new value or FST_VALUE_INVALID.
template <class Body>
inline fst_value build(fst_graph* graph, const char* function, Body&& body) noexcept {
  ValueId id = -1;
  fst_status status = guarded(function, [&] {
    require_not_null(graph, "graph");
    require_graph_ok(graph);
    id = body();
  });
  if (status == FST_OK) return fstitch::api::encode_value(graph, id);
  if (graph != nullptr && graph->error == FST_OK) {
    graph->error = status;
    try {
      graph->error_message = fst_last_error_message();
    } catch (...) {
      graph->error_message.clear();
    }
  }
  return FST_VALUE_INVALID;
}

}  // namespace fstitch::api
