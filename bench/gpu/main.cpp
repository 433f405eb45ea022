// fstitch_bench_gpu: the canonical graphs fused by fstitch on a real GPU, checked against
// the reference evaluator and timed against the device's copy bandwidth, plus fstitch's
// host overhead per launched kernel. See bench/README.md ("GPU benchmark").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "canonical_case.hpp"
#include "capi.hpp"
#include "common/canonical_graphs.hpp"
#include "gpu_runtime.hpp"
#include "launch_overhead.hpp"
#include "results.hpp"
#include "support/error.hpp"

namespace fstitch::bench_gpu {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitNoGpu = 2;

struct Options {
  std::string mode = "full";
  std::string output;
  int device = 0;
  int runs = -1;  // -1: the mode's default
  int warmup = -1;
  std::vector<std::string> graphs;  // empty: all
  bool overhead = true;
};

struct Shape {
  int64_t rows;
  int64_t cols;
};

const char* const kUsage =
    "usage: fstitch_bench_gpu [--check | --quick | --overhead-only] [--output FILE] [--runs N] [--warmup N]\n"
    "                         [--graphs NAME,NAME...] [--device N] [--no-overhead]\n"
    "  (default)  full benchmark: 8192x4096 and 16384x1024, f32 and bf16, 50 timed runs each\n"
    "  --quick    4096x1024 f32 and bf16, 20 timed runs, a shorter overhead measurement\n"
    "  --check    256x1024 f32 and bf16, one run each checked against the reference, no timing\n"
    "             (small enough for compute-sanitizer)\n"
    "  --overhead-only  only the host overhead per kernel (also meaningful with a stand-in\n"
    "             driver in FSTITCH_CUDA_DRIVER: the driver's own time is subtracted)\n"
    "Every mode but --overhead-only also runs the reduction graphs at their shapes: the column\n"
    "sum (8192x1024), the middle-axis sum (64x4096x64), the column softmax (4096x1024), the\n"
    "LayerNorm and RMSNorm backwards (8192x1024), GroupNorm (8x512x4096), BatchNorm and\n"
    "InstanceNorm (32x64x56x56), a Sinkhorn step and a full Sinkhorn\n"
    "iteration (4096x1024), f32 and bf16 (256x1024,\n"
    "8x256x64, 4x16x8x8 and 2x8x28x28 with --check), and an AdamW step over 100 parameter tensors (3\n"
    "with --check), f32; each checked whole.\n";

bool parse_int(const std::string& text, int* out) {
  try {
    size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used != text.size() || value < 0) return false;
    *out = value;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Returns false with a message on stderr for a bad command line.
bool parse_options(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&](std::string* value) {
      if (i + 1 >= argc) {
        std::cerr << "fstitch_bench_gpu: " << arg << " needs a value\n";
        return false;
      }
      *value = argv[++i];
      return true;
    };
    std::string value;
    if (arg == "--check") {
      options->mode = "check";
    } else if (arg == "--quick") {
      options->mode = "quick";
    } else if (arg == "--overhead-only") {
      options->mode = "overhead";
    } else if (arg == "--no-overhead") {
      options->overhead = false;
    } else if (arg == "--output") {
      if (!next(&options->output)) return false;
    } else if (arg == "--graphs") {
      if (!next(&value)) return false;
      options->graphs = split_commas(value);
    } else if (arg == "--runs" || arg == "--warmup" || arg == "--device") {
      if (!next(&value)) return false;
      int* target = arg == "--runs"     ? &options->runs
                    : arg == "--warmup" ? &options->warmup
                                        : &options->device;
      if (!parse_int(value, target)) {
        std::cerr << "fstitch_bench_gpu: " << arg << " takes a non-negative integer, not \"" << value
                  << "\"\n";
        return false;
      }
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      std::cerr << "fstitch_bench_gpu: unknown argument \"" << arg << "\"\n" << kUsage;
      return false;
    }
  }
  for (const std::string& name : options->graphs) {
    if (!is_known_graph(name)) {
      std::cerr << "fstitch_bench_gpu: no canonical or reduction graph named \"" << name << "\"\n";
      return false;
    }
  }
  return true;
}

std::vector<Shape> shapes_for(const std::string& mode) {
  if (mode == "check") return {{256, 1024}};
  if (mode == "quick") return {{4096, 1024}};
  return {{8192, 4096}, {16384, 1024}};
}

// The shaped graphs' dims: their benchmark shapes, or the small ones of the check mode, which
// runs under compute-sanitizer.
Dims shaped_dims(const testing::ShapedGraph& graph, const std::string& mode) {
  return mode == "check" ? graph.check_dims : graph.dims;
}

bool wanted(const Options& options, const std::string& name) {
  if (options.graphs.empty()) return true;
  for (const std::string& graph : options.graphs)
    if (graph == name) return true;
  return false;
}

void progress(const std::string& line) {
  std::cerr << "[bench-gpu] " << line << std::endl;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

void save(const Options& options, const RunReport& report) {
  if (options.output.empty()) return;
  try {
    write_file_atomically(options.output, results_json(report));
  } catch (const std::exception& e) {
    progress(std::string("cannot save results: ") + e.what());
  }
}

CopyBandwidth measure_copy(GpuRuntime& runtime, size_t bytes, int runs) {
  CopyBandwidth copy;
  try {
    DeviceBuffer source = runtime.allocate(bytes);
    DeviceBuffer target = runtime.allocate(bytes);
    runtime.fill_async(source, 0x5A);
    copy.bytes_moved = 2 * static_cast<uint64_t>(bytes);
    copy.timing = runtime.time_runs(3, runs, [&] {
      runtime.check(
          runtime.api().cuMemcpyDtoDAsync(target.address(), source.address(), bytes, runtime.stream()),
          "cuMemcpyDtoDAsync");
    });
    copy.measured = true;
  } catch (const std::exception& e) {
    copy.error = e.what();
  }
  return copy;
}

std::string describe_case(const CaseResult& r, double copy_gb_per_s) {
  if (!r.error.empty()) return case_label(r.spec) + ": ERROR " + r.error;
  std::string line = case_label(r.spec) + ": " + std::to_string(r.kernels) + " kernel(s), first run " +
                     fixed(r.first_run_ms, 1) + " ms";
  if (r.timing.runs > 0) {
    const double gbps = effective_gb_per_s(r);
    line += ", median " + fixed(r.timing.median_us, 1) + " us (min " + fixed(r.timing.min_us, 1) + "), " +
            fixed(gbps, 0) + " GB/s";
    if (copy_gb_per_s > 0) line += " = " + fixed(100 * gbps / copy_gb_per_s, 0) + "% of copy";
  }
  line += r.check.ok ? ", check ok" : ", CHECK FAILED";
  if (r.check.ran) {
    char l2[32];
    std::snprintf(l2, sizeof l2, "%.2e", r.check.worst_relative_l2);
    line += " (rel L2 " + std::string(l2) + " over " + std::to_string(r.check.rows_checked) + " rows)";
  }
  if (!r.check.note.empty()) line += ": " + r.check.note;
  return line;
}

int run(const Options& options) {
  RunReport report;
  report.mode = options.mode;
  report.fstitch_version = fst_version_string();
  std::unique_ptr<GpuRuntime> runtime;
  ContextHandle context;
  try {
    runtime = std::make_unique<GpuRuntime>(options.device);
    context = create_cuda_context(options.device);
  } catch (const Error& e) {
    const char* what = e.code() == StatusCode::kNoDriver   ? "no CUDA driver"
                       : e.code() == StatusCode::kNoDevice ? "no usable CUDA device"
                                                           : "cannot use the GPU";
    // The driver's messages often name the problem already ("no CUDA driver: ...").
    const std::string message = e.what();
    report.error = message.rfind(what, 0) == 0 ? message : std::string(what) + ": " + message;
  } catch (const std::exception& e) {
    report.error = std::string("cannot use the GPU: ") + e.what();
  }
  if (!report.error.empty()) {
    std::cerr << "fstitch_bench_gpu: " << report.error << "\n";
    save(options, report);
    return kExitNoGpu;
  }
  report.have_device = true;
  report.device = runtime->device();
  report.driver_version = runtime->driver().version();
  report.flush_bytes = runtime->flush_bytes();
  progress("device " + report.device.name + " (sm_" + std::to_string(report.device.compute_capability()) +
           ", " + std::to_string(report.device.multiprocessors) + " SMs, L2 " +
           std::to_string(report.device.l2_bytes >> 20) + " MiB), driver " +
           std::to_string(report.driver_version) + ", mode " + options.mode);

  const bool overhead_only = options.mode == "overhead";
  const bool full = options.mode == "full" || overhead_only;
  const bool timed = options.mode != "check";
  if (timed && !overhead_only) {
    const size_t copy_bytes = full ? size_t{1} << 30 : size_t{256} << 20;
    report.copy = measure_copy(*runtime, copy_bytes, full ? 20 : 10);
    progress(report.copy.measured ? "device-to-device copy: " + fixed(report.copy.gb_per_s(), 0) +
                                        " GB/s (bytes read + written, median of " +
                                        std::to_string(report.copy.timing.runs) + ")"
                                  : "copy bandwidth not measured: " + report.copy.error);
    save(options, report);
  }

  CaseOptions case_options;
  case_options.time = timed;
  case_options.runs = options.runs >= 0 ? options.runs : full ? 50 : 20;
  case_options.warmup = options.warmup >= 0 ? options.warmup : full ? 5 : 3;
  // The check mode's tensors are small: the reference sees every row.
  if (!timed) case_options.check_rows = shapes_for(options.mode).front().rows;
  bool all_ok = true;
  auto run_one = [&](const CaseSpec& spec, const CaseOptions& with) {
    progress("running " + case_label(spec));
    report.cases.push_back(run_case(*runtime, context.get(), spec, with));
    progress(describe_case(report.cases.back(), report.copy.gb_per_s()));
    all_ok = all_ok && report.cases.back().ok;
    save(options, report);
  };
  for (const Shape& shape : overhead_only ? std::vector<Shape>{} : shapes_for(options.mode)) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
        if (wanted(options, graph.name))
          run_one(CaseSpec{graph.name, shape.rows, shape.cols, dtype, {}}, case_options);
      }
    }
  }
  // The shaped graphs: their outputs mix rows, so the reference sees the whole tensors
  // (16M elements at most, a second or two on the host).
  CaseOptions shaped_options = case_options;
  shaped_options.max_whole_check_elements = int64_t{1} << 25;
  for (DType dtype : overhead_only ? std::vector<DType>{} : std::vector<DType>{DType::kF32, DType::kBF16}) {
    for (const testing::ShapedGraph& graph : shaped_graphs()) {
      const bool runs_dtype =
          std::find(graph.dtypes.begin(), graph.dtypes.end(), dtype) != graph.dtypes.end();
      if (runs_dtype && wanted(options, graph.name))
        run_one(shaped_case(graph.name, shaped_dims(graph, options.mode), dtype), shaped_options);
    }
  }

  if (timed && options.overhead) {
    OverheadOptions overhead_options;
    overhead_options.calls = full ? 2000 : 600;
    progress("measuring host overhead per kernel");
    report.overhead = measure_launch_overhead(*runtime, context.get(), overhead_options);
    report.have_overhead = true;
    const OverheadResult& o = report.overhead;
    progress(o.ok ? "host overhead (" + o.graph + ", " + std::to_string(o.kernels) +
                        " kernels): fst_fusion_run " + fixed(o.fstitch_us_per_kernel, 2) +
                        " us/kernel, raw " + fixed(o.raw_us_per_kernel, 2) + " us/kernel, fstitch's own " +
                        fixed(o.overhead_us_per_kernel, 2) +
                        " us/kernel (goal <= 3), with its own workspace " +
                        fixed(o.fstitch_auto_workspace_us_per_kernel, 2) + " us/kernel"
                  : "host overhead not measured: " + o.error);
    all_ok = all_ok && o.ok;
    save(options, report);
  }
  // Release fstitch's context (and its loaded kernels) before the device's context.
  context.reset();
  progress(all_ok ? "done: every case passed" : "done: some cases FAILED");
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace fstitch::bench_gpu

int main(int argc, char** argv) {
  fstitch::bench_gpu::Options options;
  if (!fstitch::bench_gpu::parse_options(argc, argv, &options)) return fstitch::bench_gpu::kExitUsage;
  try {
    return fstitch::bench_gpu::run(options);
  } catch (const std::exception& e) {
    std::cerr << "fstitch_bench_gpu: " << e.what() << "\n";
    return 1;
  }
}
