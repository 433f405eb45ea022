#include "ir/verify.hpp"

#include <set>

#include "ir/builder.hpp"
#include "support/error.hpp"
#include "support/quote.hpp"

namespace fstitch {

void verify_graph(const Graph& graph) {
  std::set<std::string> input_names;
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& n = graph.node(static_cast<ValueId>(i));
    for (ValueId operand : n.operands) {
      if (operand < 0 || static_cast<size_t>(operand) >= i) {
        fail(StatusCode::kInternal, "value %" + std::to_string(i) + " uses %" + std::to_string(operand) +
                                        ", which is not defined before it");
      }
    }
    ValueType t;
    try {
      t = infer_type(graph, n);
    } catch (const Error& e) {
      fail(e.code(), "value %" + std::to_string(i) + ": " + e.what());
    }
    if (t.dtype != n.dtype || t.dims != n.dims) {
      fail(StatusCode::kInternal, "value %" + std::to_string(i) + " is recorded as " + dtype_name(n.dtype) +
                                      dims_to_string(n.dims) + " but its operation yields " +
                                      dtype_name(t.dtype) + dims_to_string(t.dims));
    }
    if (n.op == OpKind::kInput && !input_names.insert(n.name).second) {
      fail(StatusCode::kInvalidArgument, "two inputs are named " + quote_name(n.name));
    }
  }
  if (graph.outputs().empty())
    fail(StatusCode::kInvalidArgument, "the graph has no outputs (add one with fst_output)");
  std::set<std::string> output_names;
  for (const GraphOutput& out : graph.outputs()) {
    if (!graph.contains(out.value)) {
      fail(StatusCode::kInternal,
           "output " + quote_name(out.name) + " refers to a value that does not exist");
    }
    if (!output_names.insert(out.name).second) {
      fail(StatusCode::kInvalidArgument, "two outputs are named " + quote_name(out.name));
    }
  }
}

}  // namespace fstitch
