#include "graph_checks.hpp"

#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "api/handles.hpp"
#include "contract.hpp"
#include "ir/numeric.hpp"

namespace fstitch::fuzz {
namespace {

// splitmix64: a fixed, platform-independent sequence for the evaluator's inputs.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Multiples of 1/8 in [-2, 2] are exact in every float dtype; small integers fit every
// integer dtype, so the inputs never depend on a conversion.
Scalar fixed_element(DType dtype, uint64_t& state) {
  const uint64_t r = next_random(state);
  Scalar s;
  if (is_float(dtype)) {
    s.f = static_cast<double>(static_cast<int64_t>(r % 33) - 16) / 8.0;
  } else if (is_bool(dtype)) {
    s.i = static_cast<int64_t>(r & 1);
  } else if (is_signed_integer(dtype)) {
    s.i = static_cast<int64_t>(r % 17) - 8;
  } else {
    s.i = static_cast<int64_t>(r % 17);
  }
  return s;
}

std::vector<unsigned char> buffer_for(const Node& node, unsigned char fill) {
  return std::vector<unsigned char>(static_cast<size_t>(element_count(node.dims)) * dtype_size(node.dtype),
                                    fill);
}

std::vector<std::vector<unsigned char>> evaluate_once(const fst_graph* graph,
                                                      const std::vector<std::vector<unsigned char>>& inputs,
                                                      unsigned char fill) {
  const Graph& g = graph->graph;
  std::vector<std::vector<unsigned char>> outputs;
  for (const GraphOutput& out : g.outputs()) outputs.push_back(buffer_for(g.node(out.value), fill));
  std::vector<const void*> in;
  for (const auto& buffer : inputs) in.push_back(buffer.data());
  std::vector<void*> out;
  for (auto& buffer : outputs) out.push_back(buffer.data());
  check_status("fst_graph_evaluate_reference",
               fst_graph_evaluate_reference(graph, in.data(), in.size(), out.data(), out.size()),
               Expectation::succeed());
  return outputs;
}

}  // namespace

Expectation fuse_expectation(const fst_graph* graph) {
  constexpr uint64_t kSafeTotal = uint64_t{1} << 62;
  uint64_t total = 0;  // every value's bytes, saturating
  for (const Node& node : graph->graph.nodes()) {
    uint64_t bytes = dtype_size(node.dtype);
    for (int64_t d : node.dims) {
      if (d < 1 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        return Expectation::unknown();
    }
    if (__builtin_add_overflow(total, bytes, &total)) return Expectation::unknown();
  }
  uint64_t read_by_every_node = 0;
  if (__builtin_mul_overflow(total, graph->graph.size() + 1, &read_by_every_node) ||
      read_by_every_node >= kSafeTotal) {
    Expectation may_run_out;
    may_run_out.unpredictable();
    return may_run_out;
  }
  return Expectation::succeed();
}

bool cheap_to_evaluate(const fst_graph* graph) {
  long long total = 0;
  for (const Node& node : graph->graph.nodes()) {
    if (op_family(node.op) == OpFamily::kOpaque) return false;
    long long elements = 1;
    for (int64_t d : node.dims) {
      if (d < 1 || elements > kMaxReferenceElements / d) return false;
      elements *= d;
    }
    total += elements;
    if (total > kMaxReferenceElements) return false;
  }
  return true;
}

std::vector<std::vector<unsigned char>> evaluate_on_fixed_inputs(const fst_graph* graph) {
  const Graph& g = graph->graph;
  std::vector<std::vector<unsigned char>> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Node& node = g.node(g.inputs()[i]);
    std::vector<unsigned char> buffer = buffer_for(node, 0);
    uint64_t state = 0x5eed0000 + i;
    for (int64_t k = 0; k < element_count(node.dims); ++k)
      store_scalar(buffer.data(), k, node.dtype, fixed_element(node.dtype, state));
    inputs.push_back(std::move(buffer));
  }
  auto first = evaluate_once(graph, inputs, 0xa5);
  auto second = evaluate_once(graph, inputs, 0x5a);
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] != second[i]) {
      violation("output " + std::to_string(i) + " (\"" + g.outputs()[i].name +
                "\") of fst_graph_evaluate_reference differs between two runs on the same inputs "
                "(unwritten elements or a nondeterministic result)");
    }
  }
  return first;
}

GraphPtr check_print_round_trip(fst_context* context, const fst_graph* graph) {
  char* text = reinterpret_cast<char*>(0x1);
  check_status("fst_graph_print", fst_graph_print(graph, &text), Expectation::succeed());
  const std::string first = text;
  fst_string_free(text);

  fst_graph* parsed = nullptr;
  const fst_status status = fst_graph_parse(context, first.data(), first.size(), &parsed);
  if (status != FST_OK) {
    violation("printed text does not parse (" + std::string(fst_status_string(status)) + "):\n" + first +
              "message: " + fst_last_error_message());
  }
  GraphPtr owned(parsed);
  check_status("fst_graph_print", fst_graph_print(parsed, &text), Expectation::succeed());
  const std::string second = text;
  fst_string_free(text);
  if (second != first)
    violation("print(parse(print(g))) differs from print(g):\n" + first + "----\n" + second);

  size_t count_before = 0;
  size_t count_after = 0;
  check_status("fst_graph_value_count", fst_graph_value_count(graph, &count_before), Expectation::succeed());
  check_status("fst_graph_value_count", fst_graph_value_count(parsed, &count_after), Expectation::succeed());
  if (count_before != count_after) {
    violation("parsing printed text gives " + std::to_string(count_after) + " values instead of " +
              std::to_string(count_before) + ":\n" + first);
  }
  return owned;
}

// The steps run every kernel and opaque operation once, and each opaque operand is at a
// location the caller or an earlier step wrote (a kernel's parameters count as written by it:
// they do not say which ones it writes).
void check_steps(const fst_fusion* fusion, size_t kernels, size_t graph_inputs, size_t graph_outputs) {
  size_t steps = 0, opaque_ops = 0;
  check_status("fst_fusion_step_count", fst_fusion_step_count(fusion, &steps), Expectation::succeed());
  check_status("fst_fusion_opaque_count", fst_fusion_opaque_count(fusion, &opaque_ops),
               Expectation::succeed());
  if (steps != kernels + opaque_ops) {
    violation(std::to_string(steps) + " steps for " + std::to_string(kernels) + " kernels and " +
              std::to_string(opaque_ops) + " opaque operations");
    return;
  }
  std::set<std::pair<int, size_t>> written;
  for (size_t i = 0; i < graph_inputs; ++i) written.insert({FST_PARAM_INPUT, i});
  std::vector<bool> kernel_seen(kernels, false), opaque_seen(opaque_ops, false);
  for (size_t s = 0; s < steps; ++s) {
    fst_step_kind kind{};
    size_t index = 0;
    check_status("fst_fusion_step", fst_fusion_step(fusion, s, &kind, &index), Expectation::succeed());
    std::vector<bool>& seen = kind == FST_STEP_KERNEL ? kernel_seen : opaque_seen;
    if ((kind != FST_STEP_KERNEL && kind != FST_STEP_OPAQUE) || index >= seen.size() || seen[index]) {
      violation("step " + std::to_string(s) + " has kind " + std::to_string(static_cast<int>(kind)) +
                " and index " + std::to_string(index) + ", out of range or run twice");
      return;
    }
    seen[index] = true;
    if (kind == FST_STEP_KERNEL) {
      const fst_kernel* kernel = nullptr;
      size_t params = 0;
      check_status("fst_fusion_kernel", fst_fusion_kernel(fusion, index, &kernel), Expectation::succeed());
      check_status("fst_kernel_param_count", fst_kernel_param_count(kernel, &params), Expectation::succeed());
      for (size_t p = 0; p < params; ++p) {
        fst_param_kind at_kind{};
        size_t at = 0;
        check_status("fst_kernel_param", fst_kernel_param(kernel, p, &at_kind, &at, nullptr),
                     Expectation::succeed());
        written.insert({at_kind, at});
      }
      continue;
    }
    const char* name = nullptr;
    size_t operands = 0;
    check_status("fst_fusion_opaque", fst_fusion_opaque(fusion, index, &name, &operands, nullptr),
                 Expectation::succeed());
    fst_param_kind at_kind{};
    size_t at = 0, rank = 0;
    fst_dtype dtype{};
    const int64_t* dims = nullptr;
    for (size_t o = 0; o < operands; ++o) {
      check_status("fst_fusion_opaque_operand",
                   fst_fusion_opaque_operand(fusion, index, o, &at_kind, &at, &dtype, &rank, &dims),
                   Expectation::succeed());
      if (!written.count({at_kind, at}))
        violation("opaque step " + std::to_string(s) + " reads operand " + std::to_string(o) +
                  " before any step wrote it");
    }
    check_status("fst_fusion_opaque_result",
                 fst_fusion_opaque_result(fusion, index, &at_kind, &at, &dtype, &rank, &dims),
                 Expectation::succeed());
    written.insert({at_kind, at});
  }
  for (size_t j = 0; j < graph_outputs; ++j) {
    if (!written.count({FST_PARAM_OUTPUT, j})) violation("no step writes output " + std::to_string(j));
  }
}

void check_fusion_queries(const fst_fusion* fusion, size_t graph_inputs, size_t graph_outputs) {
  size_t count = 0xdead;
  check_status("fst_fusion_kernel_count", fst_fusion_kernel_count(fusion, &count), Expectation::succeed());
  size_t workspace = 0;
  check_status("fst_fusion_workspace_size", fst_fusion_workspace_size(fusion, &workspace),
               Expectation::succeed());
  uint64_t planned = 0;
  uint64_t lower_bound = 0;
  check_status("fst_fusion_planned_bytes", fst_fusion_planned_bytes(fusion, &planned, &lower_bound),
               Expectation::succeed());
  if (planned < lower_bound) {
    violation("planned bytes " + std::to_string(planned) + " are below the lower bound " +
              std::to_string(lower_bound));
  }
  for (size_t k = 0; k < count; ++k) {
    const fst_kernel* kernel = nullptr;
    check_status("fst_fusion_kernel", fst_fusion_kernel(fusion, k, &kernel), Expectation::succeed());
    const char* name = nullptr;
    check_status("fst_kernel_name", fst_kernel_name(kernel, &name), Expectation::succeed());
    const char* source = nullptr;
    check_status("fst_kernel_source", fst_kernel_source(kernel, &source), Expectation::succeed());
    if (name == nullptr || *name == '\0') violation("kernel " + std::to_string(k) + " has an empty name");
    if (source == nullptr || std::strstr(source, name) == nullptr)
      violation("the source of kernel " + std::string(name) + " does not define it");
    uint32_t grid[3] = {0, 0, 0};
    uint32_t block[3] = {0, 0, 0};
    size_t shared = 0;
    check_status("fst_kernel_launch_config", fst_kernel_launch_config(kernel, grid, block, &shared),
                 Expectation::succeed());
    if (grid[0] < 1 || block[0] < 1 || block[0] > 1024 || block[1] != 1 || block[2] != 1) {
      violation("kernel " + std::string(name) + " has launch configuration grid " + std::to_string(grid[0]) +
                " block " + std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" +
                std::to_string(block[2]));
    }
    // The launcher's grid at an occupancy: at one block on one SM, one group of blocks (one
    // block, or a split row's group: a whole cluster, dividing the planned grid), and no fewer
    // than planned when every SM could hold a million blocks; 0 is refused.
    uint32_t one[3] = {0, 0, 0}, all_work[3] = {0, 0, 0}, refused[3] = {5, 5, 5}, cluster = 0;
    check_status("fst_kernel_cluster_blocks", fst_kernel_cluster_blocks(kernel, &cluster),
                 Expectation::succeed());
    check_status("fst_kernel_grid_for_occupancy", fst_kernel_grid_for_occupancy(kernel, 1, 1, one),
                 Expectation::succeed());
    check_status("fst_kernel_grid_for_occupancy",
                 fst_kernel_grid_for_occupancy(kernel, 1u << 20, 1u << 10, all_work), Expectation::succeed());
    check_status("fst_kernel_grid_for_occupancy", fst_kernel_grid_for_occupancy(kernel, 0, 132, refused),
                 Expectation::fail(StatusSet{FST_ERROR_INVALID_ARGUMENT}));
    const bool one_group = one[0] >= 1 && grid[0] % one[0] == 0 && cluster >= 1 && one[0] % cluster == 0;
    if (!one_group || all_work[0] < grid[0] || all_work[1] != 1 || all_work[2] != 1 || refused[0] != 5) {
      violation("kernel " + std::string(name) + " has grids for occupancy " + std::to_string(one[0]) +
                " (1 x 1), " + std::to_string(all_work[0]) + " (all its work; planned " +
                std::to_string(grid[0]) + "), a refused call wrote " + std::to_string(refused[0]));
    }
    size_t params = 0, constants = 0;
    check_status("fst_fusion_constant_count", fst_fusion_constant_count(fusion, &constants),
                 Expectation::succeed());
    check_status("fst_kernel_param_count", fst_kernel_param_count(kernel, &params), Expectation::succeed());
    for (size_t p = 0; p < params; ++p) {
      fst_param_kind kind{};
      size_t index = 0;
      fst_value value = FST_VALUE_INVALID;
      check_status("fst_kernel_param", fst_kernel_param(kernel, p, &kind, &index, &value),
                   Expectation::succeed());
      const bool in_range = (kind == FST_PARAM_INPUT && index < graph_inputs) ||
                            (kind == FST_PARAM_OUTPUT && index < graph_outputs) ||
                            (kind == FST_PARAM_WORKSPACE && index < workspace) ||
                            (kind == FST_PARAM_CONSTANT && index < constants);
      // Only workspace scratch (a split reduction's partials and counters) holds no value.
      if (!in_range || (value == FST_VALUE_INVALID && kind != FST_PARAM_WORKSPACE)) {
        violation("kernel " + std::string(name) + " parameter " + std::to_string(p) + " has kind " +
                  std::to_string(static_cast<int>(kind)) + " and index " + std::to_string(index) +
                  " (graph inputs " + std::to_string(graph_inputs) + ", outputs " +
                  std::to_string(graph_outputs) + ", workspace bytes " + std::to_string(workspace) + ")");
      }
    }
    uint64_t read = 0;
    uint64_t written = 0;
    check_status("fst_kernel_estimated_bytes", fst_kernel_estimated_bytes(kernel, &read, &written),
                 Expectation::succeed());
    fst_launch_kind launch{};
    check_status("fst_kernel_launch_kind", fst_kernel_launch_kind(kernel, &launch), Expectation::succeed());
    if (launch != FST_LAUNCH_REGULAR && launch != FST_LAUNCH_COOPERATIVE && launch != FST_LAUNCH_CLUSTER)
      violation("kernel " + std::string(name) + " has launch kind " +
                std::to_string(static_cast<int>(launch)));
    // Clusters, and only clusters, have more than one block per cluster.
    if ((launch == FST_LAUNCH_CLUSTER) != (cluster > 1))
      violation("kernel " + std::string(name) + " has launch kind " +
                std::to_string(static_cast<int>(launch)) + " and clusters of " + std::to_string(cluster) +
                " block(s)");
  }
  check_steps(fusion, count, graph_inputs, graph_outputs);
  char* dump = nullptr;
  check_status("fst_fusion_dump", fst_fusion_dump(fusion, &dump), Expectation::succeed());
  if (dump == nullptr || *dump == '\0') violation("fst_fusion_dump gave an empty text");
  fst_string_free(dump);
}

}  // namespace fstitch::fuzz
