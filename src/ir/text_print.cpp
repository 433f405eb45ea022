// print_graph: one line per value in id order, then one line per output.
#include <string>

#include "ir/tensor_data.hpp"
#include "ir/text.hpp"
#include "support/number_text.hpp"

namespace fstitch {
namespace {

std::string value_ref(ValueId id) {
  return "%" + std::to_string(id);
}

// Scalars are written as the dtype alone ("f32"), everything else as "f32[8,16]".
std::string type_text(DType dtype, const Dims& dims) {
  std::string text = dtype_name(dtype);
  if (!dims.empty()) text += dims_to_string(dims);
  return text;
}

// "%.17g" whatever the process locale: 17 significant digits give back the same double;
// infinities and NaNs come out as inf, -inf, nan, -nan.
std::string float_literal(double value) {
  return general_text(value, 17);
}

// A constant's value, or a pad's pad value, in the node's dtype.
std::string constant_literal(const Node& node) {
  if (is_float(node.dtype)) return float_literal(node.value.f);
  if (is_bool(node.dtype)) return node.value.i != 0 ? "true" : "false";
  return std::to_string(node.value.i);
}

// "[e0, e1, ...]" in row-major order (append_element_text); linear in the element count.
std::string tensor_literal(const Node& node) {
  const size_t size = dtype_size(node.dtype);
  const std::vector<uint8_t>& data = *node.data;
  std::string text = "[";
  text.reserve(data.size() / size * (2 * size + 4) + 2);
  for (size_t offset = 0; offset < data.size(); offset += size) {
    if (offset > 0) text += ", ";
    append_element_text(text, node.dtype, data.data() + offset);
  }
  text += "]";
  return text;
}

std::string operand_list(const std::vector<ValueId>& operands) {
  std::string text;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i > 0) text += ", ";
    text += value_ref(operands[i]);
  }
  return text;
}

// Everything between the operation name and the " : type" annotation.
std::string node_arguments(const Node& node) {
  switch (op_family(node.op)) {
    case OpFamily::kInput:
      return " \"" + node.name + "\"";
    case OpFamily::kConstant:
      return " " + constant_literal(node);
    case OpFamily::kTensor:
      return " " + tensor_literal(node);
    case OpFamily::kOpaque:
      return " \"" + node.name + "\" (" + operand_list(node.operands) + ")";
    case OpFamily::kIota:
      return " axis=" + std::to_string(node.axis);
    case OpFamily::kReduce:
      return " " + operand_list(node.operands) + " axes=" + dims_to_string(node.axes) +
             " keepdims=" + (node.keepdims ? "true" : "false");
    case OpFamily::kPermute:
      return " " + operand_list(node.operands) + " perm=" + dims_to_string(node.axes);
    case OpFamily::kSlice:
      return " " + operand_list(node.operands) + " start=" + dims_to_string(node.starts) +
             " stop=" + dims_to_string(node.stops) + " step=" + dims_to_string(node.steps);
    case OpFamily::kPad:
      return " " + operand_list(node.operands) + " low=" + dims_to_string(node.pad_low) +
             " high=" + dims_to_string(node.pad_high) + " value=" + constant_literal(node);
    case OpFamily::kConcat:
    case OpFamily::kTake:
      return " " + operand_list(node.operands) + " axis=" + std::to_string(node.axis);
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kSelect:
    case OpFamily::kCast:
    case OpFamily::kBroadcast:
    case OpFamily::kReshape:
      return " " + operand_list(node.operands);
  }
  return "";
}

}  // namespace

std::string print_graph(const Graph& graph) {
  std::string text = "fstitch.graph " + std::to_string(kTextFormatVersion) + "\n";
  for (size_t i = 0; i < graph.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& node = graph.node(id);
    text += value_ref(id) + " = " + op_name(node.op) + node_arguments(node) + " : " +
            type_text(node.dtype, node.dims) + "\n";
  }
  for (const GraphOutput& output : graph.outputs()) {
    text += "output \"" + output.name + "\" = " + value_ref(output.value) + "\n";
  }
  return text;
}

}  // namespace fstitch
