#include "ir/graph.hpp"

#include <limits>

#include "support/error.hpp"

namespace fstitch {

ValueId Graph::append(Node node) {
  if (nodes_.size() >= static_cast<size_t>(std::numeric_limits<ValueId>::max() - 1)) {
    fail(StatusCode::kOutOfMemory, "the graph has reached its maximum number of values");
  }
  auto id = static_cast<ValueId>(nodes_.size());
  if (node.op == OpKind::kInput) {
    input_names_.insert(node.name);
    inputs_.push_back(id);
  }
  nodes_.push_back(std::move(node));
  return id;
}

void Graph::add_output(std::string name, ValueId value) {
  output_names_.insert(name);
  outputs_.push_back({std::move(name), value});
}

uint64_t value_bytes(const Graph& graph, ValueId id) {
  const Node& n = graph.node(id);
  return byte_size(n.dtype, n.dims);
}

std::string describe_value(const Graph& graph, ValueId id) {
  const Node& n = graph.node(id);
  return "%" + std::to_string(id) + " (" + op_name(n.op) + ", " + dtype_name(n.dtype) +
         dims_to_string(n.dims) + ")";
}

}  // namespace fstitch
