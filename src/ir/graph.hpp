// The graph IR: SSA values in a vector, each produced by one node. Operands always refer
// to earlier nodes, so the vector order is a topological order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/numeric.hpp"
#include "ir/op.hpp"
#include "ir/shape.hpp"

namespace fstitch {

using ValueId = int32_t;

struct Node {
  OpKind op = OpKind::kInput;
  std::vector<ValueId> operands;
  DType dtype = DType::kF32;  // result dtype
  Dims dims;                  // result dims

  // Attributes (which ones are meaningful depends on op):
  std::vector<int64_t> axes;  // reduce: sorted normalized axes; permute: the permutation
  bool keepdims = false;      // reduce
  int64_t axis = 0;           // iota; concat and take: the axis (normalized)
  Scalar value;               // constant, in `dtype`; pad: the pad value
  // slice: per axis, 0 <= start < stop <= dim and step >= 1 (normalized by the builder)
  std::vector<int64_t> starts, stops, steps;
  // pad: per axis, elements added before and after (>= 0)
  std::vector<int64_t> pad_low, pad_high;
  std::string name;  // input: input name; opaque: operation name
  // tensor: the elements, dense row-major in the storage format of `dtype`. Shared and never
  // modified, so copying a graph does not copy constant data.
  std::shared_ptr<const std::vector<uint8_t>> data;
};

struct GraphOutput {
  std::string name;
  ValueId value;
};

class Graph {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(ValueId id) const { return nodes_[static_cast<size_t>(id)]; }
  size_t size() const { return nodes_.size(); }
  bool contains(ValueId id) const { return id >= 0 && static_cast<size_t>(id) < nodes_.size(); }

  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

  // Appends a node whose dtype and dims are already inferred; returns its id.
  ValueId append(Node node);
  void add_output(std::string name, ValueId value);

  // Whether an input (an output) has this name: constant time, so building a graph with
  // many inputs or outputs stays linear.
  bool has_input_named(const std::string& name) const { return input_names_.count(name) != 0; }
  bool has_output_named(const std::string& name) const { return output_names_.count(name) != 0; }

 private:
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<GraphOutput> outputs_;
  std::unordered_set<std::string> input_names_;
  std::unordered_set<std::string> output_names_;
};

// Bytes of value `id`: at most kMaxValueBytes, as every value was checked when it was built.
uint64_t value_bytes(const Graph& graph, ValueId id);

// "%3 (f32[8,16])": how errors name a value.
std::string describe_value(const Graph& graph, ValueId id);

}  // namespace fstitch
