#include "row_sample.hpp"

#include <cstring>

namespace fstitch::bench_gpu {
namespace {

std::string dims_text(const Dims& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

bool rows_are_independent(const Graph& graph, int64_t rows, int64_t cols, std::string* why) {
  const Dims matrix = {rows, cols};
  const Dims row = {cols};
  for (ValueId id : graph.inputs()) {
    const Dims& dims = graph.node(id).dims;
    if (dims != matrix && dims != row) {
      *why = "input " + graph.node(id).name + " is " + dims_text(dims) + ", neither [rows, cols] nor [cols]";
      return false;
    }
  }
  for (const GraphOutput& output : graph.outputs()) {
    if (graph.node(output.value).dims != matrix) {
      *why =
          "output " + output.name + " is " + dims_text(graph.node(output.value).dims) + ", not [rows, cols]";
      return false;
    }
  }
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& node = graph.node(static_cast<ValueId>(i));
    const OpFamily family = op_family(node.op);
    if (family == OpFamily::kReshape || family == OpFamily::kPermute || family == OpFamily::kIota ||
        family == OpFamily::kOpaque || family == OpFamily::kSlice || family == OpFamily::kConcat ||
        family == OpFamily::kPad || family == OpFamily::kTake) {
      *why = std::string("the graph has a ") + op_name(node.op) + " operation";
      return false;
    }
    if (family == OpFamily::kReduce) {
      const auto operand_rank = static_cast<int64_t>(graph.node(node.operands.at(0)).dims.size());
      if (node.axes.size() != 1 || node.axes[0] != operand_rank - 1) {
        *why = std::string("a ") + op_name(node.op) + " reduces other axes than the last";
        return false;
      }
    }
  }
  return true;
}

std::vector<int64_t> sample_rows(int64_t rows, int64_t count) {
  std::vector<int64_t> sample;
  if (rows <= 0 || count <= 0) return sample;
  if (count >= rows || count == 1) {
    const int64_t n = count >= rows ? rows : 1;
    for (int64_t r = 0; r < n; ++r) sample.push_back(r);
    return sample;
  }
  // Evenly spaced with the ends included; integer arithmetic keeps them distinct since
  // count <= rows.
  for (int64_t i = 0; i < count; ++i) sample.push_back(i * (rows - 1) / (count - 1));
  return sample;
}

std::vector<unsigned char> gather_rows(const void* data, int64_t cols, size_t element_bytes,
                                       const std::vector<int64_t>& rows) {
  const size_t row_bytes = static_cast<size_t>(cols) * element_bytes;
  std::vector<unsigned char> out(rows.size() * row_bytes);
  const auto* base = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(out.data() + i * row_bytes, base + static_cast<size_t>(rows[i]) * row_bytes, row_bytes);
  }
  return out;
}

}  // namespace fstitch::bench_gpu
