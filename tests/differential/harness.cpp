#include "differential/harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <sstream>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/random_graph.hpp"
#include "differential/compare.hpp"
#include "differential/cuda_runner.hpp"
#include "differential/noise_floor.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "jit/compile.hpp"
#include "ref/evaluator.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/host/planned_launch.hpp"
#include "runtime/kernel_args.hpp"
#include "support/error.hpp"

namespace fstitch::testing {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kGuardBytes = 64;
constexpr unsigned char kCanary = 0xA5;
// Outputs and workspace start as NaN bytes, so an element nobody writes fails; integer
// outputs get a second pattern in the reverse run, as 0xFF is a valid integer.
constexpr unsigned char kNanFill = 0xFF;
constexpr unsigned char kIntegerFill = 0xA7;
constexpr size_t kMaxCompilerLog = 4000;
// An ill-conditioned output may differ from the reference by this multiple of its noise floor.
constexpr double kNoiseFloorFactor = 10.0;

// A buffer with canary bytes on both sides, to catch writes out of bounds.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, unsigned char fill)
      : bytes_(bytes), storage_(kGuardBytes + kAlignment + bytes + kGuardBytes, kCanary) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data()) + kGuardBytes;
    offset_ = kGuardBytes + (kAlignment - base % kAlignment) % kAlignment;
    std::memset(storage_.data() + offset_, fill, bytes_);
  }
  unsigned char* data() { return storage_.data() + offset_; }
  const unsigned char* data() const { return storage_.data() + offset_; }
  size_t size() const { return bytes_; }
  // The whole buffer with its guards, for copying it to a device and back.
  GuardedSpan span() { return GuardedSpan{storage_.data(), storage_.size(), offset_}; }
  bool guards_intact() const {
    for (size_t i = 0; i < storage_.size(); ++i) {
      if ((i < offset_ || i >= offset_ + bytes_) && storage_[i] != kCanary) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::vector<unsigned char> storage_;
  size_t offset_ = 0;
};

size_t value_bytes(const Node& n) {
  return static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype);
}

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ull + b;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}

// Inputs and reference outputs of one graph, shared by its cases.
struct GraphData {
  std::vector<GuardedBuffer> inputs;
  std::vector<std::vector<unsigned char>> reference;
  std::vector<Tolerance> tolerances;  // widened to the noise floor where that is higher
  std::vector<NoiseFloor> floors;
  size_t widened = 0;  // outputs whose tolerance the noise floor widened
  std::string error;   // the reference evaluator failed
};

GraphData make_graph_data(const Graph& g, uint64_t seed) {
  GraphData d;
  std::vector<const void*> in;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    d.inputs.emplace_back(value_bytes(n), 0);
    fill_random_input(d.inputs.back().data(), element_count(n.dims), n.dtype, mix(seed, i));
  }
  for (const GuardedBuffer& b : d.inputs) in.push_back(b.data());
  std::vector<void*> out;
  for (const GraphOutput& o : g.outputs()) d.reference.emplace_back(value_bytes(g.node(o.value)));
  for (auto& r : d.reference) out.push_back(r.data());
  d.tolerances = output_tolerances(g);
  try {
    evaluate_reference(g, in, out);
    d.floors =
        measure_noise_floor(g, in, std::vector<const void*>(out.begin(), out.end()), mix(seed, 0x401e));
  } catch (const std::exception& e) {
    d.error = std::string("the reference evaluator failed: ") + e.what();
    return d;
  }
  for (size_t i = 0; i < d.tolerances.size(); ++i) {
    Tolerance& t = d.tolerances[i];
    if (t.exact) continue;
    const NoiseFloor& f = d.floors[i];
    if (kNoiseFloorFactor * f.l2 > t.l2 || kNoiseFloorFactor * f.max_over_rms > t.max_over_rms) ++d.widened;
    t.l2 = std::max(t.l2, kNoiseFloorFactor * f.l2);
    t.max_over_rms = std::max(t.max_over_rms, kNoiseFloorFactor * f.max_over_rms);
  }
  return d;
}

// The GPU runner, opened on first use; a failure to open is remembered and reported by
// every case.
CudaRunner& cuda_runner() {
  static std::string error;
  static std::unique_ptr<CudaRunner> runner = []() -> std::unique_ptr<CudaRunner> {
    try {
      return std::make_unique<CudaRunner>();
    } catch (const std::exception& e) {
      error = std::string("FSTITCH_BACKEND=cuda, but the GPU cannot be used: ") + e.what();
      return nullptr;
    }
  }();
  if (!runner) throw Error(StatusCode::kNoDevice, error);
  return *runner;
}

struct Prepared {
  const DiffCase* c = nullptr;
  FusionPlan plan;
  bool planned = false;
  std::vector<PlannedKernel> kernels;  // renamed to be unique in the batch
  std::string source;                  // their definitions, without the prelude
  std::string error;
};

Prepared prepare(const DiffCase& c, const std::string& prefix, DiffBackend backend) {
  Prepared p;
  p.c = &c;
  try {
    verify_graph(*c.graph);
    FusionOptions options;
    options.policy = c.policy;
    if (backend == DiffBackend::kCuda) options.target_sm = cuda_runner().target_sm();
    if (c.device) {
      options.device = c.device;
      options.device->sm = options.target_sm;
    }
    if (c.register_cap) options.register_cap = *c.register_cap;
    if (c.shared_budget) options.shared_budget = *c.shared_budget;
    p.plan = plan_fusion(*c.graph, options);
    p.planned = true;
    for (const PlannedKernel& k : p.plan.kernels) {
      PlannedKernel renamed = k;
      renamed.name = prefix + "_" + k.name;
      p.source += "\n" + emit_kernel(*c.graph, renamed);
      p.kernels.push_back(std::move(renamed));
    }
  } catch (const std::exception& e) {
    p.error = std::string(p.planned ? "code generation failed: " : "planning failed: ") + e.what();
  }
  return p;
}

struct Compiled {
  std::shared_ptr<host::HostModule> module;  // DiffBackend::kHost: the batch in one module
  // DiffBackend::kCuda: one NVRTC module per case (compiled in parallel), by kernel name.
  std::map<std::string, std::shared_ptr<const jit::CompiledModule>> device_modules;
  std::string error;
  bool ok() const { return module || !device_modules.empty(); }
};

// Compiles the cases' kernels for the GPU: each case is its own NVRTC program, so the
// compiles run in parallel and a case that does not compile fails alone.
Compiled compile_for_device(const std::vector<const Prepared*>& cases) {
  Compiled c;
  try {
    std::vector<std::string> texts;
    std::vector<const Prepared*> compiled_cases;
    for (const Prepared* p : cases) {
      if (!p->error.empty()) continue;
      texts.push_back(kernel_prelude() + p->source);
      compiled_cases.push_back(p);
    }
    const auto modules = cuda_runner().compile(texts);
    for (size_t i = 0; i < compiled_cases.size(); ++i) {
      for (const PlannedKernel& k : compiled_cases[i]->kernels) c.device_modules[k.name] = modules[i];
    }
  } catch (const std::exception& e) {
    c.device_modules.clear();
    c.error = e.what();
    if (c.error.size() > kMaxCompilerLog) c.error = c.error.substr(0, kMaxCompilerLog) + "\n[...]";
  }
  return c;
}

Compiled compile(const std::string& kernels, const HarnessOptions& options) {
  host::HostCompileOptions compile_options;
  compile_options.disk_cache = !options.cache_dir.empty();
  compile_options.cache_dir = options.cache_dir;
  Compiled c;
  try {
    const std::string text = kernel_prelude() + kernels;
    c.module = host::HostModule::compile(text, compile_options);
    // The very text the host ran must also be valid CUDA for NVRTC: assembled for sm_80 (the
    // front end and ptxas) and, at the same time, through the front end for sm_90. ptxas for
    // sm_90 runs on the NvrtcCompile suites' kernels; here it would double the suites' NVRTC
    // time for a check sm_80's assembly already makes.
    const std::shared_ptr<const jit::Nvrtc> nvrtc = jit::system_nvrtc();
    jit::CompileRequest request;
    request.source = text;
    request.name = "differential_batch.cu";
    request.arch = 90;
    auto front_end =
        std::async(std::launch::async, [&nvrtc, request] { jit::compile_to_ptx(*nvrtc, request); });
    request.arch = 80;
    std::exception_ptr assembly_error;
    try {
      jit::compile_program(*nvrtc, request);
    } catch (...) {
      assembly_error = std::current_exception();
    }
    front_end.get();
    if (assembly_error) std::rethrow_exception(assembly_error);
  } catch (const std::exception& e) {
    c.error = e.what();
    if (c.error.size() > kMaxCompilerLog) c.error = c.error.substr(0, kMaxCompilerLog) + "\n[...]";
  }
  return c;
}

// One execution of a plan: on the host in one thread order, or on the GPU.
enum class RunMode : uint8_t { kHostForward, kHostReverse, kCuda };

const char* run_mode_name(RunMode mode) {
  switch (mode) {
    case RunMode::kHostForward:
      return "host, thread order forward";
    case RunMode::kHostReverse:
      return "host, thread order reverse";
    case RunMode::kCuda:
      return "cuda";
  }
  return "?";
}

std::string output_title(const Graph& g, size_t i) {
  const Node& n = g.node(g.outputs()[i].value);
  return "output " + std::to_string(i) + " \"" + g.outputs()[i].name + "\" (%" +
         std::to_string(g.outputs()[i].value) + " " + dtype_name(n.dtype) + dims_to_string(n.dims) + ")";
}

// Launches the plan's kernels on the host module, one after another.
std::string launch_on_host(const Prepared& p, const host::HostModule& module, GraphData& data,
                           std::vector<GuardedBuffer>& outputs, GuardedBuffer& workspace,
                           host::ThreadOrder order) {
  host::HostLaunchOptions launch;
  launch.order = order;
  std::vector<const void*> inputs;
  std::vector<void*> outs;
  for (GuardedBuffer& b : data.inputs) inputs.push_back(b.data());
  for (GuardedBuffer& b : outputs) outs.push_back(b.data());
  // Tensor constants: the graph's own data, as the host backend of the library passes it.
  std::vector<const void*> constants;
  for (ValueId c : p.plan.constants) constants.push_back(p.c->graph->node(c).data->data());
  runtime::KernelArguments args;
  for (const PlannedKernel& k : p.kernels) {
    args.pack(k, inputs.data(), outs.data(), reinterpret_cast<uintptr_t>(workspace.data()), constants.data());
    // The kernel's zeroed workspace (a split reduction's counters) starts at zero, as the
    // library's runs make it; the rest of the workspace keeps its NaN bytes.
    if (void* zeroed = args.zeroed_address(k)) std::memset(zeroed, 0, k.zeroed_workspace.bytes);
    host::set_residency(k, launch);
    try {
      const int64_t grid = p.c->host_grid ? p.c->host_grid(k) : k.spec.grid_blocks;
      module.launch(k.name, host::Dim3{static_cast<unsigned>(grid), 1, 1},
                    host::Dim3{static_cast<unsigned>(k.spec.block_threads), 1, 1},
                    k.spec.dynamic_shared_bytes, args.params(), launch);
    } catch (const std::exception& e) {
      return "  launch of " + k.name + " failed: " + e.what() + "\n";
    }
  }
  return "";
}

// Launches the plan's kernels on the GPU with device copies of the buffers.
std::string launch_on_cuda(const Prepared& p, const Compiled& compiled, GraphData& data,
                           std::vector<GuardedBuffer>& outputs, GuardedBuffer& workspace) {
  if (p.kernels.empty()) return "";
  auto found = compiled.device_modules.find(p.kernels.front().name);
  if (found == compiled.device_modules.end())
    return "  no compiled module holds " + p.kernels.front().name + "\n";
  const jit::CompiledModule& module = *found->second;
  std::vector<GuardedSpan> in, out;
  for (GuardedBuffer& b : data.inputs) in.push_back(b.span());
  for (GuardedBuffer& b : outputs) out.push_back(b.span());
  GuardedSpan space = workspace.span();
  std::vector<GuardedSpan> constants;  // read-only: uploaded, never copied back
  for (ValueId c : p.plan.constants) {
    const std::vector<uint8_t>& bytes = *p.c->graph->node(c).data;
    constants.push_back({const_cast<unsigned char*>(bytes.data()), bytes.size(), 0});
  }
  return cuda_runner().run(module, p.kernels, in, out, space, constants);
}

// Runs the plan once; returns what went wrong (empty when all outputs match).
std::string run_once(const Prepared& p, const Compiled& compiled, GraphData& data, RunMode mode,
                     double* worst_ratio) {
  const Graph& g = *p.c->graph;
  std::vector<GuardedBuffer> outputs;
  for (const GraphOutput& o : g.outputs()) {
    const Node& n = g.node(o.value);
    const bool integer = !is_float(n.dtype);
    outputs.emplace_back(value_bytes(n), integer && mode == RunMode::kHostReverse ? kIntegerFill : kNanFill);
  }
  GuardedBuffer workspace(std::max<size_t>(p.plan.workspace_bytes, 1), kNanFill);
  std::vector<std::vector<unsigned char>> input_copies;
  for (const GuardedBuffer& b : data.inputs) input_copies.emplace_back(b.data(), b.data() + b.size());

  const std::string launch_problem =
      mode == RunMode::kCuda ? launch_on_cuda(p, compiled, data, outputs, workspace)
                             : launch_on_host(p, *compiled.module, data, outputs, workspace,
                                              mode == RunMode::kHostForward ? host::ThreadOrder::kForward
                                                                            : host::ThreadOrder::kReverse);
  if (!launch_problem.empty()) return launch_problem;

  std::ostringstream problems;
  for (size_t i = 0; i < data.inputs.size(); ++i) {
    const GuardedBuffer& b = data.inputs[i];
    if (!b.guards_intact()) problems << "  a kernel wrote outside input " << i << "\n";
    if (!std::equal(input_copies[i].begin(), input_copies[i].end(), b.data())) {
      problems << "  a kernel wrote into input " << i << "\n";
      std::memcpy(data.inputs[i].data(), input_copies[i].data(), b.size());
    }
  }
  if (!workspace.guards_intact()) problems << "  a kernel wrote outside the workspace\n";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Node& n = g.node(g.outputs()[i].value);
    if (!outputs[i].guards_intact()) problems << "  a kernel wrote outside " << output_title(g, i) << "\n";
    if (n.dtype == DType::kBool) {
      const auto* bytes = outputs[i].data();
      const int64_t stray =
          std::count_if(bytes, bytes + outputs[i].size(), [](unsigned char b) { return b > 1; });
      if (stray > 0)
        problems << "  " << output_title(g, i) << ": " << stray
                 << " byte(s) are neither 0 nor 1 (unwritten?)\n";
    }
    const Tolerance& tol = data.tolerances[i];
    const Comparison c = compare_output(outputs[i].data(), data.reference[i].data(), n.dtype, n.dims, tol);
    if (!tol.exact) {
      *worst_ratio = std::max({*worst_ratio, c.l2_error / tol.l2, c.max_over_rms / tol.max_over_rms});
    }
    if (!c.ok) {
      problems << "  " << output_title(g, i) << " differs from the reference (noise floor: relative L2 "
               << data.floors[i].l2 << ", largest / RMS " << data.floors[i].max_over_rms << "):\n"
               << c.report;
    }
    if (std::getenv("FSTITCH_DIFF_TRACE_ERRORS") != nullptr && !tol.exact) {
      std::printf("error-trace %s %s out%zu l2 %.3g floor %.3g limit %.3g max %.3g floor %.3g limit %.3g\n",
                  p.c->label.c_str(), fusion_policy_name(p.c->policy), i, c.l2_error, data.floors[i].l2,
                  tol.l2, c.max_over_rms, data.floors[i].max_over_rms, tol.max_over_rms);
    }
  }
  return problems.str();
}

CaseResult run_prepared(const Prepared& p, const Compiled& compiled, GraphData& data) {
  CaseResult r;
  r.kernels = p.kernels.size();
  r.widened_outputs = data.widened;
  std::ostringstream failure;
  if (!p.error.empty()) {
    failure << "  " << p.error << "\n";
  } else if (!data.error.empty()) {
    failure << "  " << data.error << "\n";
  } else if (!compiled.ok()) {
    failure << "  the generated code does not compile:\n" << compiled.error << "\n";
  } else {
    const std::vector<RunMode> modes =
        !compiled.device_modules.empty() ? std::vector<RunMode>{RunMode::kCuda}
                                         : std::vector<RunMode>{RunMode::kHostForward, RunMode::kHostReverse};
    for (RunMode mode : modes) {
      const std::string problems = run_once(p, compiled, data, mode, &r.worst_ratio);
      if (!problems.empty()) failure << " " << run_mode_name(mode) << ":\n" << problems;
    }
  }
  if (failure.str().empty()) return r;
  r.ok = false;
  std::ostringstream report;
  report << p.c->label << ", policy " << fusion_policy_name(p.c->policy) << ": FAILED\n"
         << failure.str() << "reproduce: " << p.c->reproduce << "\ngraph:\n"
         << print_graph(*p.c->graph);
  if (p.planned) report << "plan:\n" << dump_plan(*p.c->graph, p.plan);
  if (std::getenv("FSTITCH_DIFF_DUMP_SOURCE") != nullptr)
    report << "source:\n" << kernel_prelude() << p.source;
  r.report = report.str();
  return r;
}

struct Batch {
  std::vector<size_t> indices;  // into the cases
  std::vector<Prepared> prepared;
  std::string source;
};

Batch prepare_batch(const std::vector<DiffCase>& cases, size_t begin, size_t end, DiffBackend backend) {
  Batch b;
  for (size_t i = begin; i < end; ++i) {
    b.indices.push_back(i);
    b.prepared.push_back(prepare(cases[i], "c" + std::to_string(i), backend));
    b.source += b.prepared.back().source;
  }
  return b;
}

void run_batch(const Batch& b, const Compiled& compiled, const HarnessOptions& options,
               std::vector<CaseResult>& results) {
  std::map<const Graph*, GraphData> data;
  for (size_t j = 0; j < b.prepared.size(); ++j) {
    const Prepared& p = b.prepared[j];
    auto found = data.find(p.c->graph.get());
    if (found == data.end())
      found = data.emplace(p.c->graph.get(), make_graph_data(*p.c->graph, p.c->data_seed)).first;
    if (compiled.ok() || !p.error.empty()) {
      results[b.indices[j]] = run_prepared(p, compiled, found->second);
    } else {
      // The module failed to compile: compile this case alone to find who is to blame.
      results[b.indices[j]] = run_prepared(
          p, options.backend == DiffBackend::kCuda ? compile_for_device({&p}) : compile(p.source, options),
          found->second);
    }
  }
}

}  // namespace

HarnessOptions harness_options_from_env() {
  HarnessOptions options;
  options.backend = diff_backend_from_env();
#ifdef FSTITCH_DIFF_CACHE_DIR
  options.cache_dir = FSTITCH_DIFF_CACHE_DIR;
#endif
  return options;
}

std::vector<CaseResult> run_cases(const std::vector<DiffCase>& cases, const HarnessOptions& options) {
  std::vector<CaseResult> results(cases.size());
  const size_t batch_size = std::max<size_t>(options.batch_size, 1);
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t begin = 0; begin < cases.size(); begin += batch_size) {
    ranges.emplace_back(begin, std::min(cases.size(), begin + batch_size));
  }
  // The next batch compiles while the current one runs.
  auto start = [&](size_t k) {
    auto batch =
        std::make_shared<Batch>(prepare_batch(cases, ranges[k].first, ranges[k].second, options.backend));
    auto compiled = std::async(std::launch::async, [batch, &options] {
      if (options.backend != DiffBackend::kCuda) return compile(batch->source, options);
      std::vector<const Prepared*> batch_cases;
      for (const Prepared& p : batch->prepared) batch_cases.push_back(&p);
      return compile_for_device(batch_cases);
    });
    return std::make_pair(batch, std::move(compiled));
  };
  if (ranges.empty()) return results;
  auto current = start(0);
  for (size_t k = 0; k < ranges.size(); ++k) {
    const Compiled compiled = current.second.get();
    const std::shared_ptr<Batch> batch = current.first;
    if (k + 1 < ranges.size()) current = start(k + 1);
    if (options.backend == DiffBackend::kCuda && compiled.ok()) cuda_runner().begin_batch();
    run_batch(*batch, compiled, options, results);
  }
  return results;
}

DiffBackend diff_backend_from_env() {
  const char* backend = std::getenv("FSTITCH_BACKEND");
  return backend != nullptr && std::string(backend) == "cuda" ? DiffBackend::kCuda : DiffBackend::kHost;
}

void fill_random_input(void* buffer, int64_t count, DType dtype, uint64_t seed) {
  Rng rng(seed);
  const bool small_i32 = rng.chance(0.75);
  for (int64_t k = 0; k < count; ++k) {
    Scalar s;
    switch (dtype) {
      case DType::kF32:
      case DType::kF16:
      case DType::kBF16:
      case DType::kF64:
        s.f = rng.uniform(-2.0, 2.0);
        break;
      case DType::kI8:
        s.i = rng.range(-128, 127);
        break;
      case DType::kU8:
        s.i = rng.range(0, 255);
        break;
      case DType::kI32:
        s.i = small_i32 ? rng.range(-1000, 1000) : rng.range(INT32_MIN, INT32_MAX);
        break;
      case DType::kI64:
        s.i = rng.range(-1000000, 1000000);
        break;
      case DType::kBool:
        s.i = static_cast<int64_t>(rng.below(2));
        break;
    }
    store_scalar(buffer, k, dtype, s);
  }
}

std::optional<std::pair<uint64_t, uint64_t>> parse_seed_range(const std::string& text) {
  auto parse_number = [](const std::string& s) -> std::optional<uint64_t> {
    if (s.empty() || s.size() > 18 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    return std::stoull(s);
  };
  const size_t dash = text.find('-');
  const auto first = parse_number(text.substr(0, dash));
  const auto last = dash == std::string::npos ? first : parse_number(text.substr(dash + 1));
  if (!first || !last || *first > *last) return std::nullopt;
  return std::make_pair(*first, *last);
}

runtime::KernelArguments launch_planned_on_host(const host::HostModule& module, const PlannedKernel& k,
                                                const void* const* inputs, void* const* outputs,
                                                unsigned char* workspace, host::ThreadOrder order) {
  runtime::KernelArguments args;
  args.pack(k, inputs, outputs, reinterpret_cast<uintptr_t>(workspace), nullptr);
  if (void* zeroed = args.zeroed_address(k)) std::memset(zeroed, 0, k.zeroed_workspace.bytes);
  host::HostLaunchOptions options;
  options.order = order;
  host::set_residency(k, options);
  module.launch(k.name, host::Dim3{static_cast<unsigned>(k.spec.grid_blocks), 1, 1},
                host::Dim3{static_cast<unsigned>(k.spec.block_threads), 1, 1}, k.spec.dynamic_shared_bytes,
                args.params(), options);
  return args;
}

}  // namespace fstitch::testing
