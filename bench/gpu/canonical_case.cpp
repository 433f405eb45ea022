#include "canonical_case.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <vector>

#include "capi.hpp"
#include "common/canonical_graphs.hpp"
#include "common/packed_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "host_data.hpp"
#include "ir/text.hpp"
#include "reference_rows.hpp"
#include "row_sample.hpp"

namespace fstitch::bench_gpu {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<unsigned char>;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The builder of a case's graph at any number of rows (the reference's sampled rows); a
// shaped graph is built at its own shape whatever the rows.
GraphBuilder builder_of(const CaseSpec& spec) {
  if (spec.dims.empty()) {
    for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
      if (graph.name == spec.graph) return graph.build;
    }
  } else {
    for (const testing::ShapedGraph& graph : shaped_graphs()) {
      if (graph.name == spec.graph) {
        const Dims dims = spec.dims;
        return [build = graph.build, dims](int64_t, int64_t, DType dtype) { return build(dims, dtype); };
      }
    }
  }
  throw std::runtime_error("no " + std::string(spec.dims.empty() ? "canonical" : "shaped") +
                           " graph named \"" + spec.graph + "\"");
}

// FNV-1a: input seeds that depend on the case, the same on every machine.
uint64_t label_hash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Downloads the outputs and compares them with the reference; `check` keeps the worst seen.
void verify_outputs(const GpuRuntime& runtime, const CaseSpec& spec, const std::vector<TensorSpec>& outputs,
                    const std::vector<DeviceBuffer>& device_outputs, const RowReference& reference,
                    CaseCheck& check, const char* when) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto dtype = static_cast<DType>(outputs[i].dtype);
    Bytes host(outputs[i].bytes());
    runtime.download(host.data(), device_outputs[i], host.size());
    const int64_t nonfinite = count_nonfinite(host.data(), outputs[i].count(), dtype);
    check.nonfinite = std::max(check.nonfinite, nonfinite);
    const double limit = relative_l2_limit(dtype);
    check.limit = check.limit == 0 ? limit : std::min(check.limit, limit);
    if (nonfinite > 0 && check.note.empty()) {
      check.note = std::string(when) + ": output " + outputs[i].name + " has " + std::to_string(nonfinite) +
                   " NaN or infinite elements (unwritten or wrong)";
    }
    if (!reference.ran) continue;
    Bytes rows_of_result;
    const void* result = host.data();
    int64_t count = outputs[i].count();
    if (!reference.rows.empty()) {
      rows_of_result = gather_rows(host.data(), spec.cols, fst_dtype_size(outputs[i].dtype), reference.rows);
      result = rows_of_result.data();
      count = static_cast<int64_t>(reference.rows.size()) * spec.cols;
    }
    const Accuracy accuracy = compare_elements(result, reference.outputs[i].data(), count, dtype);
    check.worst_relative_l2 = std::max(check.worst_relative_l2, accuracy.relative_l2);
    if (!accuracy.passes(limit) && check.note.empty()) {
      check.note = std::string(when) + ": output " + outputs[i].name + " relative L2 error " +
                   std::to_string(accuracy.relative_l2) + " (limit " + std::to_string(limit) + "), " +
                   std::to_string(accuracy.mismatched_nonfinite) + " non-finite mismatches";
    }
    if (!accuracy.passes(limit)) check.ok = false;
  }
  if (check.nonfinite > 0) check.ok = false;
}

}  // namespace

const std::vector<testing::ShapedGraph>& shaped_graphs() {
  static const std::vector<testing::ShapedGraph> graphs = [] {
    std::vector<testing::ShapedGraph> all = testing::reduction_graphs();
    for (const testing::ShapedGraph& graph : testing::optimizer_graphs()) all.push_back(graph);
    return all;
  }();
  return graphs;
}

CaseSpec shaped_case(const std::string& graph, const Dims& dims, DType dtype) {
  CaseSpec spec;
  spec.graph = graph;
  spec.dims = dims;
  spec.dtype = dtype;
  spec.cols = dims.empty() ? 1 : dims.back();
  spec.rows = spec.cols == 0 ? 0 : element_count(dims) / spec.cols;
  return spec;
}

std::string case_label(const CaseSpec& spec) {
  const std::string shape = spec.dims.empty() ? std::to_string(spec.rows) + "x" + std::to_string(spec.cols)
                                              : testing::dims_text(spec.dims);
  return spec.graph + " " + shape + " " + dtype_name(spec.dtype);
}

bool is_known_graph(const std::string& name) {
  for (const testing::CanonicalGraph& graph : testing::canonical_graphs())
    if (graph.name == name) return true;
  for (const testing::ShapedGraph& graph : shaped_graphs())
    if (graph.name == name) return true;
  return false;
}

CaseResult run_case(GpuRuntime& runtime, fst_context* context, const CaseSpec& spec,
                    const CaseOptions& options) {
  CaseResult result;
  result.spec = spec;
  try {
    const GraphBuilder build = builder_of(spec);
    const Graph graph = build(spec.rows, spec.cols, spec.dtype);
    GraphHandle parsed = parse_graph_text(context, print_graph(graph));

    const auto fuse_start = Clock::now();
    FusionHandle fusion = fuse_graph(parsed.get(), FST_POLICY_STITCH);
    result.fuse_ms = ms_since(fuse_start);
    require_ok(fst_fusion_kernel_count(fusion.get(), &result.kernels), "fst_fusion_kernel_count");
    require_ok(fst_fusion_planned_bytes(fusion.get(), &result.planned_bytes, &result.lower_bound_bytes),
               "fst_fusion_planned_bytes");
    require_ok(fst_fusion_workspace_size(fusion.get(), &result.workspace_bytes), "fst_fusion_workspace_size");

    const std::vector<TensorSpec> inputs = graph_inputs(parsed.get());
    const std::vector<TensorSpec> outputs = graph_outputs(parsed.get());
    const uint64_t seed = options.seed * 0x9E3779B97F4A7C15ull ^ label_hash(case_label(spec));
    std::vector<Bytes> host_inputs;
    std::vector<DeviceBuffer> device_inputs;
    std::vector<const void*> input_pointers;
    for (size_t i = 0; i < inputs.size(); ++i) {
      host_inputs.push_back(
          random_elements(inputs[i].count(), static_cast<DType>(inputs[i].dtype), seed + i));
      device_inputs.push_back(runtime.allocate(inputs[i].bytes()));
      runtime.upload(device_inputs.back(), host_inputs.back().data(), inputs[i].bytes());
      input_pointers.push_back(device_inputs.back().pointer());
    }
    std::vector<DeviceBuffer> device_outputs;
    std::vector<void*> output_pointers;
    for (const TensorSpec& output : outputs) {
      device_outputs.push_back(runtime.allocate(output.bytes()));
      // All bits set: NaN in every float dtype, so an element the run leaves alone fails.
      runtime.fill_async(device_outputs.back(), 0xFF);
      output_pointers.push_back(device_outputs.back().pointer());
    }
    DeviceBuffer workspace;
    if (result.workspace_bytes > 0) workspace = runtime.allocate(result.workspace_bytes);
    runtime.synchronize();

    auto run = [&] {
      require_ok(fst_fusion_run(fusion.get(), input_pointers.data(), input_pointers.size(),
                                output_pointers.data(), output_pointers.size(),
                                workspace.bytes() > 0 ? workspace.pointer() : nullptr, runtime.stream()),
                 "fst_fusion_run");
    };
    const auto first_start = Clock::now();
    run();
    runtime.synchronize();
    result.first_run_ms = ms_since(first_start);

    const RowReference reference =
        reference_rows(context, build, spec.rows, spec.cols, spec.dtype, inputs, host_inputs,
                       options.check_rows, options.max_whole_check_elements);
    result.check.ran = reference.ran;
    result.check.ok = true;
    result.check.note = reference.note;
    result.check.rows_checked = !reference.ran           ? 0
                                : reference.rows.empty() ? spec.rows
                                                         : static_cast<int64_t>(reference.rows.size());
    verify_outputs(runtime, spec, outputs, device_outputs, reference, result.check, "first run");

    if (options.time) {
      result.timing = runtime.time_runs(options.warmup, options.runs, run);
      // Outputs of the last timed run: a result that changes between runs is a race.
      verify_outputs(runtime, spec, outputs, device_outputs, reference, result.check, "after the timed runs");
    }
    result.ok = result.check.ok;
  } catch (const std::exception& e) {
    result.error = e.what();
    result.ok = false;
  }
  return result;
}

}  // namespace fstitch::bench_gpu
