// fst_graph_print, fst_graph_parse and fst_graph_evaluate_reference.
#include <cstring>
#include <string_view>
#include <vector>

#include "api/handles.hpp"
#include "api/opaque_call.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "ref/evaluator.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::api::guarded;
using fstitch::api::require_graph_ok;
using fstitch::api::require_not_null;

namespace {

// Both reference evaluations: without a callback (nullptr) a graph with opaque operations is
// unsupported; with one, each runs through it on host buffers.
void evaluate(const fst_graph* graph, const void* const* inputs, size_t ninputs, void* const* outputs,
              size_t noutputs, const fstitch::api::OpaqueCallback* callback) {
  require_not_null(graph, "graph");
  require_graph_ok(graph);
  const fstitch::Graph& g = graph->graph;
  fstitch::verify_graph(g);
  fstitch::api::check_run_buffers(g, inputs, ninputs, outputs, noutputs);
  const std::vector<const void*> in(inputs, inputs + ninputs);
  const std::vector<void*> out(outputs, outputs + noutputs);
  if (callback == nullptr) {
    fstitch::evaluate_reference(g, in, out);
    return;
  }
  std::vector<fstitch::ValueId> opaque_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.node(static_cast<fstitch::ValueId>(i)).op == fstitch::OpKind::kOpaque)
      opaque_ops.push_back(static_cast<fstitch::ValueId>(i));
  }
  fstitch::api::require_callback_for(g, opaque_ops, *callback);
  const fstitch::OpaqueRunner run = [&](const fstitch::OpaqueInvocation& invocation) {
    fst_opaque_call call;
    call.graph = &g;
    call.op = invocation.op;
    call.graph_serial = graph->serial->value();
    call.operands = invocation.operands;
    call.result = invocation.result;
    fstitch::api::invoke_opaque(*callback, call);
  };
  fstitch::evaluate_reference(g, in, out, callback->function != nullptr ? &run : nullptr);
}

}  // namespace

extern "C" {

FST_API fst_status fst_graph_print(const fst_graph* graph, char** out_text) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_text, "out_text");
    require_graph_ok(graph);
    std::string text = fstitch::print_graph(graph->graph);
    char* copy = new char[text.size() + 1];
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out_text = copy;
  });
}

FST_API fst_status fst_graph_parse(fst_context* context, const char* text, size_t length,
                                   fst_graph** out_graph) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(text, "text");
    require_not_null(out_graph, "out_graph");
    std::string_view view =
        length == static_cast<size_t>(-1) ? std::string_view(text) : std::string_view(text, length);
    auto graph = std::make_unique<fst_graph>();
    graph->context = context->impl;
    graph->graph = fstitch::parse_graph(view);
    graph->serial = fstitch::api::GraphSerial::acquire();
    *out_graph = graph.release();
  });
}

FST_API fst_status fst_graph_evaluate_reference(const fst_graph* graph, const void* const* inputs,
                                                size_t ninputs, void* const* outputs, size_t noutputs) {
  return guarded(__func__, [&] { evaluate(graph, inputs, ninputs, outputs, noutputs, nullptr); });
}

FST_API fst_status fst_graph_evaluate_reference_with_opaque(const fst_graph* graph, const void* const* inputs,
                                                            size_t ninputs, void* const* outputs,
                                                            size_t noutputs, fst_opaque_callback callback,
                                                            void* user_data) {
  return guarded(__func__, [&] {
    const fstitch::api::OpaqueCallback hook{callback, user_data};
    evaluate(graph, inputs, ninputs, outputs, noutputs, &hook);
  });
}

}  // extern "C"
