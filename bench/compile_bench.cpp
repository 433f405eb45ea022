#include "compile_bench.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/canonical_graphs.hpp"
#include "ir/builder.hpp"
#include "ir/verify.hpp"
#include "jit/kernel_cache.hpp"
#include "markdown.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/kernel_spec.hpp"
#include "plan/plan.hpp"
#include "timing.hpp"

namespace fstitch::bench {
namespace {

// The graph compiled for sm_80 as well, to show the other supported architecture.
constexpr const char* kSecondArchGraph = "layer_norm";

// A directory under the system temporary directory, removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fstitch-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory from " + pattern);
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The requests the library itself makes for a plan (fst_fusion's device modules): one
// program per kernel, the prelude followed by the kernel.
std::vector<jit::CompileRequest> plan_requests(const Graph& graph, const FusionPlan& plan) {
  std::vector<jit::CompileRequest> requests;
  for (const PlannedKernel& kernel : plan.kernels) {
    jit::CompileRequest request;
    request.source = std::string(kernel_prelude()) + "\n" + emit_kernel(graph, kernel);
    request.name = kernel.name + ".cu";
    request.arch = plan.options.target_sm;
    requests.push_back(std::move(request));
  }
  return requests;
}

struct CompileCase {
  const testing::CanonicalGraph* graph;
  BenchShape shape;
  int arch;
};

struct CompileResult {
  size_t kernels = 0;
  size_t source_bytes = 0;
  double cold_seconds = 0;
  double warm_seconds = 0;
  double disk_seconds = 0;
};

void expect(bool condition, const std::string& what) {
  if (!condition) throw std::runtime_error(what);
}

CompileResult measure_compiles(const std::vector<jit::CompileRequest>& requests, const BenchConfig& config,
                               const std::filesystem::path& disk_dir, std::vector<jit::ModulePtr>* modules,
                               Findings& findings) {
  CompileResult result;
  result.kernels = requests.size();
  for (const auto& r : requests) result.source_bytes += r.source.size();

  // Cold: a fresh memory-only cache compiles everything.
  std::unique_ptr<jit::KernelCache> cache;
  std::vector<double> cold;
  for (int run = 0; run < config.compile_runs; ++run) {
    cache = std::make_unique<jit::KernelCache>(jit::KernelCacheOptions{});
    cold.push_back(seconds_of([&] { *modules = cache->compile_all(requests); }));
    expect(cache->stats().compiled == requests.size(), "a cold cache did not compile every kernel");
  }
  result.cold_seconds = median(cold);

  // Warm: the same requests again on the last cache are memory hits.
  const uint64_t hits_before = cache->stats().memory_hits;
  result.warm_seconds = median_seconds(config.warm_runs, [&] { cache->compile_all(requests); });
  expect(
      cache->stats().memory_hits - hits_before == requests.size() * static_cast<uint64_t>(config.warm_runs),
      "repeated requests were not all memory hits");

  // Disk: one cache fills the directory, fresh caches on it read every module back.
  jit::KernelCacheOptions disk_options;
  disk_options.directory = disk_dir.string();
  disk_options.warn = [&findings](const std::string& message) {
    findings.add("disk cache warning: " + message);
  };
  {
    jit::KernelCache filler(disk_options);
    filler.compile_all(requests);
    expect(filler.stats().disk_writes == requests.size(), "the disk cache did not store every module");
  }
  std::vector<double> disk;
  for (int run = 0; run < config.compile_runs; ++run) {
    jit::KernelCache reader(disk_options);
    disk.push_back(seconds_of([&] { reader.compile_all(requests); }));
    expect(reader.stats().disk_hits == requests.size() && reader.stats().compiled == 0,
           "a fresh cache on a filled directory compiled instead of reading from disk");
  }
  result.disk_seconds = median(disk);
  return result;
}

std::vector<CompileCase> compile_cases(const BenchConfig& config) {
  std::vector<CompileCase> cases;
  for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
    for (const BenchShape& shape : canonical_shapes(config)) cases.push_back({&graph, shape, 90});
  }
  for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
    if (graph.name != kSecondArchGraph) continue;
    for (const BenchShape& shape : canonical_shapes(config)) cases.push_back({&graph, shape, 80});
  }
  return cases;
}

std::string int_text(int64_t value) {
  return std::to_string(value);
}

// An elementwise chain of `ops` operations over one [1024, 1024] f32 input: a subtraction
// and a multiplication by constants, and with `tanh` a tanh after each pair (libdevice's
// tanhf is branchy code that NVRTC takes longer over).
Graph elementwise_chain(int ops, bool tanh) {
  Graph g;
  const Dims dims = {1024, 1024};
  ValueId y = build_input(g, "x", DType::kF32, dims);
  for (int i = 0; i < ops; ++i) {
    const int step = i % (tanh ? 3 : 2);
    if (step == 2) {
      y = build_unary(g, OpKind::kTanh, y);
      continue;
    }
    const ValueId c = build_broadcast(g, build_constant_f64(g, DType::kF32, step ? 1.0001 : 0.25), dims);
    y = build_binary(g, step ? OpKind::kMul : OpKind::kSub, y, c);
  }
  build_output(g, "y", y);
  return g;
}

// The whole graph as one kernel, whatever its size: how the compile of one kernel grows.
PlannedKernel whole_graph_kernel(const Graph& graph) {
  PlanInputs in = make_plan_inputs(graph, FusionPolicy::kStitch, *arch_params(90));
  in.code_budget = std::numeric_limits<double>::infinity();
  std::vector<ValueId> members;
  for (size_t v = 0; v < graph.size(); ++v) {
    if (is_fusable(in, static_cast<ValueId>(v))) members.push_back(static_cast<ValueId>(v));
  }
  PlannedKernel k;
  k.name = "fst_k0";
  Rejection why;
  if (!analyze_kernel(in, members, &k.spec, &why)) throw std::runtime_error("one kernel: " + why.reason);
  for (ValueId v : k.spec.loaded) k.params.push_back({ParamKind::kInput, 0, v, false});
  for (ValueId v : k.spec.stored) k.params.push_back({ParamKind::kOutput, 0, v, true});
  return k;
}

double median_cold_compile(const std::vector<jit::CompileRequest>& requests, int runs,
                           std::vector<jit::ModulePtr>* modules) {
  std::vector<double> cold;
  for (int run = 0; run < runs; ++run) {
    jit::KernelCache cache(jit::KernelCacheOptions{});
    cold.push_back(seconds_of([&] { *modules = cache.compile_all(requests); }));
  }
  return median(cold);
}

// NVRTC compile time against kernel size: kernels are limited by their estimated code
// (plan/cost_model.hpp code_instructions, PlanInputs::code_budget), not by a number of
// operations. Each chain compiled as one kernel shows how compile time grows with the
// estimate; the planned columns show what the budget makes of it.
void write_kernel_size_section(std::ostream& out, const BenchConfig& config, Findings& findings) {
  const double budget = PlanInputs{}.code_budget;
  out << "### Compile time against kernel size\n\n"
      << "Elementwise chains over one [1024, 1024] f32 input for sm_90, cold compiles, median of "
      << config.compile_runs << ": first as one kernel whatever its size (code: the planner's "
      << "estimate of the kernel's instructions, copies per lane included), then as planned, "
      << "where kernels hold at most " << static_cast<int64_t>(budget) << " of code.\n\n";
  MarkdownTable table({{"chain", false},
                       {"operations"},
                       {"code"},
                       {"source KiB"},
                       {"one kernel ms"},
                       {"registers"},
                       {"planned kernels"},
                       {"planned ms"}});
  std::vector<int> sizes = {64, 256, 1024};
  if (!config.quick) sizes.push_back(4096);
  for (bool tanh : {false, true}) {
    for (int ops : sizes) {
      const std::string chain = tanh ? "sub, mul, tanh" : "sub, mul";
      progress("compiling a chain of " + std::to_string(ops) + " operations (" + chain + ")");
      try {
        const Graph graph = elementwise_chain(ops, tanh);
        FusionPlan one;
        one.options.target_sm = 90;
        one.kernels.push_back(whole_graph_kernel(graph));
        const std::vector<jit::CompileRequest> requests = plan_requests(graph, one);
        std::vector<jit::ModulePtr> modules;
        const double one_ms = median_cold_compile(requests, config.compile_runs, &modules) * 1e3;
        const jit::FunctionResources* f = jit::find_function(modules[0]->resources, "fst_k0");
        FusionOptions options;
        options.target_sm = 90;
        const FusionPlan plan = plan_fusion(graph, options);
        const double planned_ms =
            median_cold_compile(plan_requests(graph, plan), config.compile_runs, &modules) * 1e3;
        table.add_row({chain, std::to_string(ops),
                       std::to_string(static_cast<int64_t>(code_instructions(graph, one.kernels[0].spec))),
                       fixed(static_cast<double>(requests[0].source.size()) / 1024.0, 1), fixed(one_ms, 1),
                       f ? std::to_string(f->registers) : "not reported", std::to_string(plan.kernels.size()),
                       fixed(planned_ms, 1)});
      } catch (const std::exception& e) {
        table.add_row({chain, std::to_string(ops), "error"});
        findings.add("chain of " + std::to_string(ops) +
                     " operations: compile measurement failed: " + e.what());
      }
    }
  }
  out << table.render() << "\n";
}

}  // namespace

void write_compile_sections(std::ostream& out, const BenchConfig& config, const MachineInfo& machine,
                            Findings& findings) {
  out << "## 2. NVRTC compile of the stitch plans\n\n";
  if (!machine.nvrtc_error.empty()) {
    out << "Skipped: NVRTC is not available (" << machine.nvrtc_error << ").\n\n";
    out << "## 3. Registers and spills of the stitch kernels\n\nSkipped: NVRTC is not available.\n\n";
    findings.add("NVRTC could not be loaded; no compile times or resource reports were measured.");
    return;
  }

  // The first NVRTC compile of a process pays for loading its builtins; measured apart so
  // the cold column shows a steady-state compile.
  {
    jit::KernelCache cache(jit::KernelCacheOptions{});
    jit::CompileRequest first;
    first.source = std::string(kernel_prelude()) +
                   "\nextern \"C\" __global__ void fstitch_bench_first(float* p) { p[0] = 1.0f; }\n";
    first.name = "fstitch_bench_first.cu";
    first.arch = 90;
    const double seconds = seconds_of([&] { cache.get(first); });
    out << "The process's first NVRTC compile (the prelude and an empty kernel) took "
        << fixed(seconds * 1e3, 1) << " ms; it is excluded from the table.\n\n";
  }

  MarkdownTable timing({{"graph", false},
                        {"shape", false},
                        {"dtype", false},
                        {"arch", false},
                        {"kernels"},
                        {"source KiB"},
                        {"cold ms"},
                        {"warm us"},
                        {"disk ms"}});
  MarkdownTable resources({{"graph", false},
                           {"shape", false},
                           {"dtype", false},
                           {"arch", false},
                           {"kernel", false},
                           {"schedule", false},
                           {"block"},
                           {"registers"},
                           {"spill stores B"},
                           {"spill loads B"},
                           {"stack B"},
                           {"shared B"}});
  TempDir temp;
  int case_index = 0;
  for (const CompileCase& c : compile_cases(config)) {
    const std::string arch = "sm_" + std::to_string(c.arch);
    const std::string dtype = dtype_name(c.shape.dtype);
    const std::string label = c.graph->name + " " + shape_text(c.shape) + " " + dtype + " " + arch;
    progress("compiling " + label);
    try {
      const Graph graph = c.graph->build(c.shape.rows, c.shape.cols, c.shape.dtype);
      verify_graph(graph);
      FusionOptions options;
      options.policy = FusionPolicy::kStitch;
      options.target_sm = c.arch;
      const FusionPlan plan = plan_fusion(graph, options);
      std::vector<jit::ModulePtr> modules;
      const CompileResult r = measure_compiles(
          plan_requests(graph, plan), config, temp.path() / std::to_string(case_index++), &modules, findings);
      timing.add_row({c.graph->name, shape_text(c.shape), dtype, arch, std::to_string(r.kernels),
                      fixed(static_cast<double>(r.source_bytes) / 1024.0, 1), fixed(r.cold_seconds * 1e3, 1),
                      fixed(r.warm_seconds * 1e6, 1), fixed(r.disk_seconds * 1e3, 2)});

      for (size_t k = 0; k < plan.kernels.size(); ++k) {
        const PlannedKernel& kernel = plan.kernels[k];
        std::vector<std::string> row = {c.graph->name,
                                        shape_text(c.shape),
                                        dtype,
                                        arch,
                                        kernel.name,
                                        schedule_kind_name(kernel.spec.schedule),
                                        std::to_string(kernel.spec.block_threads)};
        const jit::FunctionResources* f = jit::find_function(modules[k]->resources, kernel.name);
        if (f == nullptr) {
          row.push_back("not reported");
          findings.add(label + ": ptxas reported no resources for " + kernel.name + ".");
        } else {
          row.insert(row.end(), {std::to_string(f->registers), int_text(f->spill_store_bytes),
                                 int_text(f->spill_load_bytes), int_text(f->stack_frame_bytes),
                                 int_text(f->shared_bytes)});
          if (f->spill_store_bytes > 0 || f->spill_load_bytes > 0) {
            findings.add(label + ": " + kernel.name + " spills (" + int_text(f->spill_store_bytes) +
                         " B stores, " + int_text(f->spill_load_bytes) + " B loads).");
          }
          if (f->registers > plan.options.register_cap) {
            findings.add(label + ": " + kernel.name + " uses " + std::to_string(f->registers) +
                         " registers, above the planner's cap of " +
                         std::to_string(plan.options.register_cap) + ".");
          }
        }
        resources.add_row(std::move(row));
      }
    } catch (const std::exception& e) {
      timing.add_row({c.graph->name, shape_text(c.shape), dtype, arch, "error"});
      findings.add(label + ": compile measurement failed: " + e.what());
    }
  }
  out << timing.render() << "\n";
  write_kernel_size_section(out, config, findings);
  out << "## 3. Registers and spills of the stitch kernels\n\n" << resources.render() << "\n";
}

}  // namespace fstitch::bench
