#include "reference_rows.hpp"

#include <algorithm>

#include "ir/text.hpp"
#include "row_sample.hpp"

namespace fstitch::bench_gpu {
namespace {

// What bounds the reference's time on a whole graph: its largest input or output.
int64_t largest_tensor_elements(const Graph& graph) {
  int64_t largest = 0;
  for (ValueId id : graph.inputs()) largest = std::max(largest, element_count(graph.node(id).dims));
  for (const GraphOutput& output : graph.outputs())
    largest = std::max(largest, element_count(graph.node(output.value).dims));
  return largest;
}

}  // namespace

RowReference reference_rows(fst_context* context, const GraphBuilder& build, int64_t rows, int64_t cols,
                            DType dtype, const std::vector<TensorSpec>& inputs,
                            const std::vector<std::vector<unsigned char>>& host_inputs, int64_t check_rows,
                            int64_t max_whole_elements) {
  RowReference reference;
  const Graph graph = build(rows, cols, dtype);
  std::string why;
  const bool by_rows = rows_are_independent(graph, rows, cols, &why);
  // Without row independence the reference must see the whole tensors: only small ones.
  if (!by_rows && largest_tensor_elements(graph) > max_whole_elements) {
    reference.note = "not checked: " + why + ", and the tensors are too large for the reference";
    return reference;
  }
  const bool sampled = by_rows && check_rows < rows;
  if (sampled) reference.rows = sample_rows(rows, check_rows);

  const Graph reference_graph =
      sampled ? build(static_cast<int64_t>(reference.rows.size()), cols, dtype) : graph;
  GraphHandle parsed = parse_graph_text(context, print_graph(reference_graph));
  std::vector<std::vector<unsigned char>> gathered(inputs.size());
  std::vector<const void*> input_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (sampled && inputs[i].dims.size() == 2) {
      gathered[i] = gather_rows(host_inputs[i].data(), cols, fst_dtype_size(inputs[i].dtype), reference.rows);
      input_pointers.push_back(gathered[i].data());
    } else {
      input_pointers.push_back(host_inputs[i].data());
    }
  }
  std::vector<void*> output_pointers;
  for (const TensorSpec& output : graph_outputs(parsed.get())) {
    reference.outputs.emplace_back(output.bytes());
    output_pointers.push_back(reference.outputs.back().data());
  }
  require_ok(fst_graph_evaluate_reference(parsed.get(), input_pointers.data(), input_pointers.size(),
                                          output_pointers.data(), output_pointers.size()),
             "fst_graph_evaluate_reference");
  reference.ran = true;
  return reference;
}

}  // namespace fstitch::bench_gpu
