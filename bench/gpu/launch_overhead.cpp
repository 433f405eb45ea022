#include "launch_overhead.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <functional>
#include <stdexcept>
#include <vector>

#include "capi.hpp"
#include "host_data.hpp"

namespace fstitch::bench_gpu {
namespace {

using Clock = std::chrono::steady_clock;

// Launches queued between synchronizations, well inside the driver's launch queue, so a
// timed loop never blocks on a full queue.
constexpr int kLaunchesPerSync = 512;

GraphHandle build_chain(fst_context* context, const OverheadOptions& options) {
  fst_graph* raw = nullptr;
  require_ok(fst_graph_create(context, &raw), "fst_graph_create");
  GraphHandle graph(raw);
  const int64_t dims[2] = {options.rows, options.cols};
  fst_value y = fst_input(graph.get(), "x", FST_F32, 2, dims);
  // Bounded functions, so no value overflows however long the chain.
  constexpr std::array<fst_unary_op, 4> kOps = {FST_UNARY_TANH, FST_UNARY_NEG, FST_UNARY_SIGMOID,
                                                FST_UNARY_ABS};
  for (int i = 0; i < options.chain; ++i)
    y = fst_unary(graph.get(), kOps[static_cast<size_t>(i) % kOps.size()], y);
  require_ok(fst_output(graph.get(), "y", y), "fst_output");
  require_ok(fst_graph_status(graph.get()), "building the chain graph");
  return graph;
}

// One kernel as a framework would launch it itself: the function, its configuration and a
// prepared argument array.
struct RawLaunch {
  void* function = nullptr;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  size_t shared_bytes = 0;
  bool cooperative = false;
  std::vector<cuda::CUdeviceptr> addresses;
  std::vector<void*> params;
};

std::vector<RawLaunch> prepare_raw_launches(const fst_fusion* fusion, cuda::CUdeviceptr input,
                                            cuda::CUdeviceptr output, cuda::CUdeviceptr workspace) {
  size_t count = 0;
  require_ok(fst_fusion_kernel_count(fusion, &count), "fst_fusion_kernel_count");
  std::vector<RawLaunch> launches(count);
  for (size_t k = 0; k < count; ++k) {
    const fst_kernel* kernel = nullptr;
    require_ok(fst_fusion_kernel(fusion, k, &kernel), "fst_fusion_kernel");
    RawLaunch& launch = launches[k];
    require_ok(fst_kernel_function(kernel, &launch.function), "fst_kernel_function");
    require_ok(fst_kernel_launch_config(kernel, launch.grid, launch.block, &launch.shared_bytes),
               "fst_kernel_launch_config");
    fst_launch_kind kind = FST_LAUNCH_REGULAR;
    require_ok(fst_kernel_launch_kind(kernel, &kind), "fst_kernel_launch_kind");
    launch.cooperative = kind == FST_LAUNCH_COOPERATIVE;
    size_t params = 0;
    require_ok(fst_kernel_param_count(kernel, &params), "fst_kernel_param_count");
    for (size_t p = 0; p < params; ++p) {
      fst_param_kind param_kind = FST_PARAM_INPUT;
      size_t index = 0;
      require_ok(fst_kernel_param(kernel, p, &param_kind, &index, nullptr), "fst_kernel_param");
      if (param_kind == FST_PARAM_INPUT) {
        launch.addresses.push_back(input);
      } else if (param_kind == FST_PARAM_OUTPUT) {
        launch.addresses.push_back(output);
      } else {
        launch.addresses.push_back(workspace + index);
      }
    }
    // Pointers into `addresses`, which no longer grows.
    for (cuda::CUdeviceptr& address : launch.addresses) launch.params.push_back(&address);
  }
  return launches;
}

void launch_raw(const GpuRuntime& runtime, RawLaunch& launch) {
  const cuda::DriverApi& api = runtime.api();
  auto* function = static_cast<cuda::CUfunction>(launch.function);
  const auto shared = static_cast<unsigned>(launch.shared_bytes);
  if (launch.cooperative) {
    runtime.check(api.cuLaunchCooperativeKernel(function, launch.grid[0], launch.grid[1], launch.grid[2],
                                                launch.block[0], launch.block[1], launch.block[2], shared,
                                                runtime.stream(), launch.params.data()),
                  "cuLaunchCooperativeKernel");
    return;
  }
  runtime.check(api.cuLaunchKernel(function, launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0],
                                   launch.block[1], launch.block[2], shared, runtime.stream(),
                                   launch.params.data(), nullptr),
                "cuLaunchKernel");
}

// Host microseconds per kernel of each batch of `calls_per_sync` calls; the stream is
// synchronized between batches, outside the timed region.
void time_batches(const GpuRuntime& runtime, int calls, int calls_per_sync, size_t kernels,
                  const std::function<void()>& call, std::vector<double>& per_kernel_us) {
  for (int done = 0; done < calls;) {
    const int batch = std::min(calls_per_sync, calls - done);
    const auto start = Clock::now();
    for (int i = 0; i < batch; ++i) call();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    runtime.synchronize();
    per_kernel_us.push_back(us / (static_cast<double>(batch) * static_cast<double>(kernels)));
    done += batch;
  }
}

}  // namespace

OverheadResult measure_launch_overhead(GpuRuntime& runtime, fst_context* context,
                                       const OverheadOptions& options) {
  OverheadResult result;
  result.graph = "chain of " + std::to_string(options.chain) + " unary ops " + std::to_string(options.rows) +
                 "x" + std::to_string(options.cols) + " f32, policy none";
  try {
    GraphHandle graph = build_chain(context, options);
    FusionHandle fusion = fuse_graph(graph.get(), FST_POLICY_NONE);
    require_ok(fst_fusion_kernel_count(fusion.get(), &result.kernels), "fst_fusion_kernel_count");
    if (result.kernels == 0) throw std::runtime_error("the chain fused into no kernel");
    size_t workspace_bytes = 0;
    require_ok(fst_fusion_workspace_size(fusion.get(), &workspace_bytes), "fst_fusion_workspace_size");

    const int64_t elements = options.rows * options.cols;
    const size_t bytes = static_cast<size_t>(elements) * sizeof(float);
    DeviceBuffer input = runtime.allocate(bytes);
    DeviceBuffer output = runtime.allocate(bytes);
    DeviceBuffer workspace;
    if (workspace_bytes > 0) workspace = runtime.allocate(workspace_bytes);
    const std::vector<unsigned char> host = random_elements(elements, DType::kF32, 7);
    runtime.upload(input, host.data(), bytes);

    const void* inputs[1] = {input.pointer()};
    void* outputs[1] = {output.pointer()};
    void* workspace_pointer = workspace.bytes() > 0 ? workspace.pointer() : nullptr;
    auto fstitch_run = [&] {
      require_ok(fst_fusion_run(fusion.get(), inputs, 1, outputs, 1, workspace_pointer, runtime.stream()),
                 "fst_fusion_run");
    };
    auto fstitch_run_auto = [&] {
      require_ok(fst_fusion_run(fusion.get(), inputs, 1, outputs, 1, nullptr, runtime.stream()),
                 "fst_fusion_run");
    };
    // Loads (and compiles) the kernels before fst_kernel_function is asked for them.
    fstitch_run();
    runtime.synchronize();
    std::vector<RawLaunch> launches =
        prepare_raw_launches(fusion.get(), input.address(), output.address(), workspace.address());
    auto raw_run = [&] {
      for (RawLaunch& launch : launches) launch_raw(runtime, launch);
    };

    result.calls = options.calls;
    result.calls_per_sync = std::max(1, kLaunchesPerSync / static_cast<int>(result.kernels));
    for (int i = 0; i < options.warmup_calls; ++i) {
      fstitch_run();
      raw_run();
      fstitch_run_auto();
    }
    runtime.synchronize();
    // Two rounds, alternating, so a drift of the machine's speed affects both sides alike.
    std::vector<double> fstitch_us, raw_us, auto_us;
    for (int round = 0; round < 2; ++round) {
      const int calls = options.calls / 2;
      time_batches(runtime, calls, result.calls_per_sync, result.kernels, fstitch_run, fstitch_us);
      time_batches(runtime, calls, result.calls_per_sync, result.kernels, raw_run, raw_us);
      time_batches(runtime, calls, result.calls_per_sync, result.kernels, fstitch_run_auto, auto_us);
    }
    result.fstitch_us_per_kernel = summarize(fstitch_us).median_us;
    result.raw_us_per_kernel = summarize(raw_us).median_us;
    result.fstitch_auto_workspace_us_per_kernel = summarize(auto_us).median_us;
    result.overhead_us_per_kernel = result.fstitch_us_per_kernel - result.raw_us_per_kernel;
    result.ok = true;
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace fstitch::bench_gpu
