// fst_fuse_options_*, fst_fuse, fst_fusion_* and fst_kernel_*.
#include <cstdio>
#include <cstring>
#include <limits>
#include <locale>
#include <sstream>

#include "api/buffer_overlap.hpp"
#include "api/compile_stat.hpp"
#include "api/fusion.hpp"
#include "api/handles.hpp"
#include "api/opaque_call.hpp"
#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "ir/verify.hpp"
#include "jit/kernel_cache.hpp"
#include "plan/launch_grid.hpp"
#include "runtime/cuda/constants.hpp"
#include "runtime/cuda/device.hpp"
#include "runtime/cuda/kernel_image.hpp"
#include "runtime/cuda/launch.hpp"
#include "runtime/cuda/workspace.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/host/planned_launch.hpp"
#include "runtime/kernel_args.hpp"
#include "support/env.hpp"
#include "support/quote.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::api::guarded;
using fstitch::api::require_graph_ok;
using fstitch::api::require_not_null;

namespace {

char* copy_string(const std::string& text) {
  char* copy = new char[text.size() + 1];
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

const fstitch::PlannedKernel& planned(const fst_kernel* kernel) {
  return kernel->fusion->plan.kernels[kernel->index];
}

// FSTITCH_DUMP=plan,cuda,ptx writes those forms of every fusion to stderr.
void dump_requested(const fst_fusion& fusion) {
  auto dump = fstitch::env_string("FSTITCH_DUMP");
  if (!dump) return;
  std::string list = "," + *dump + ",";
  auto wants = [&](const char* what) {
    return list.find(std::string(",") + what + ",") != std::string::npos;
  };
  if (wants("plan")) std::fprintf(stderr, "%s", fstitch::dump_plan(fusion.graph, fusion.plan).c_str());
  if (wants("cuda")) std::fprintf(stderr, "%s", fusion.source.c_str());
  if (wants("ptx")) {
    try {
      for (size_t i = 0; i < fusion.kernels.size(); ++i) {
        std::fprintf(stderr, "%s", fusion.device_module(i)->ptx.c_str());
      }
    } catch (const fstitch::Error& e) {
      fusion.context->logger.log(fstitch::LogLevel::kWarn, std::string("FSTITCH_DUMP=ptx: ") + e.what());
    }
  }
}

fstitch::host::HostLaunchOptions host_launch_options(const fst_fusion& fusion,
                                                     const fstitch::PlannedKernel& k) {
  fstitch::host::HostLaunchOptions options;
  options.order = fusion.context->config.host_reverse_thread_order ? fstitch::host::ThreadOrder::kReverse
                                                                   : fstitch::host::ThreadOrder::kForward;
  fstitch::host::set_residency(k, options);
  return options;
}

// Launches kernel `index` on the host, after clearing its zeroed workspace.
void launch_on_host(const fst_fusion& fusion, const fstitch::host::HostModule& module, size_t index,
                    fstitch::runtime::KernelArguments& args) {
  const fstitch::PlannedKernel& k = fusion.plan.kernels[index];
  if (void* zeroed = args.zeroed_address(k)) std::memset(zeroed, 0, k.zeroed_workspace.bytes);
  fstitch::host::Dim3 grid{static_cast<unsigned>(k.spec.grid_blocks), 1, 1};
  fstitch::host::Dim3 block{static_cast<unsigned>(k.spec.block_threads), 1, 1};
  module.launch(k.name, grid, block, k.spec.dynamic_shared_bytes, args.params(),
                host_launch_options(fusion, k));
}

// Runs opaque step `index` through the caller's callback, with its buffers at the plan's
// locations.
void run_opaque_step(const fst_fusion& fusion, size_t index, const fstitch::api::OpaqueCallback& callback,
                     const void* const* inputs, void* const* outputs, uintptr_t workspace, void* stream,
                     const void* const* constants) {
  const fstitch::OpaqueStep& step = fusion.plan.opaque_steps[index];
  fst_opaque_call call;
  call.graph = &fusion.graph;
  call.op = step.op;
  call.graph_serial = fusion.graph_serial->value();
  for (const fstitch::ValueLocation& at : step.operands)
    call.operands.push_back(fstitch::runtime::location_address(at, inputs, outputs, workspace, constants));
  call.result = fstitch::runtime::location_address(step.result, inputs, outputs, workspace, constants);
  call.stream = stream;
  fstitch::api::invoke_opaque(callback, call);
}

// The host backend runs the steps one after another on the calling thread.
void run_on_host(const fst_fusion& fusion, const void* const* inputs, void* const* outputs,
                 unsigned char* workspace, const fstitch::api::OpaqueCallback& callback) {
  std::shared_ptr<fstitch::host::HostModule> module = fusion.host_module();
  fstitch::runtime::KernelArguments args;
  const auto space = reinterpret_cast<uintptr_t>(workspace);
  for (const fstitch::PlanStep& step : fusion.plan.steps) {
    if (step.kind == fstitch::StepKind::kOpaque) {
      run_opaque_step(fusion, step.index, callback, inputs, outputs, space, nullptr,
                      fusion.host_constants.data());
      continue;
    }
    args.pack(fusion.plan.kernels[step.index], inputs, outputs, space, fusion.host_constants.data());
    launch_on_host(fusion, *module, step.index, args);
  }
}

// Queues kernel `index` on `stream` in the current CUDA context (a ContextScope is active).
void launch_on_cuda(const fst_fusion& fusion, size_t index, fstitch::runtime::KernelArguments& args,
                    fstitch::cuda::CUstream stream) {
  const fstitch::cuda::Device& device = *fusion.context->device;
  const fstitch::PlannedKernel& k = fusion.plan.kernels[index];
  // The zeroed workspace is cleared on the launch's stream, so it is zero when the kernel starts.
  if (void* zeroed = args.zeroed_address(k)) {
    fstitch::cuda::clear_on_stream(device, reinterpret_cast<fstitch::cuda::CUdeviceptr>(zeroed),
                                   k.zeroed_workspace.bytes, stream);
  }
  // The grid is sized from the occupancy of the compiled kernel, queried when it was loaded.
  const fstitch::cuda::LoadedKernel& loaded = *fusion.cuda_kernels()[index];
  fstitch::cuda::launch_kernel(device, loaded,
                               fstitch::cuda::launch_config(fusion.plan.kernels[index], device.info(),
                                                            loaded.blocks_per_multiprocessor()),
                               stream, args.params());
}

// The CUDA backend queues every launch on the caller's stream and returns without waiting.
void run_on_cuda(const fst_fusion& fusion, const void* const* inputs, void* const* outputs, void* workspace,
                 void* stream, const fstitch::api::OpaqueCallback& callback) {
  fstitch::cuda::Device& device = *fusion.context->device;
  fstitch::cuda::ContextScope scope(device);
  auto* cu_stream = static_cast<fstitch::cuda::CUstream>(stream);
  std::unique_ptr<fstitch::cuda::StreamWorkspace> owned;
  uintptr_t space = reinterpret_cast<uintptr_t>(workspace);
  if (space == 0 && fusion.plan.workspace_bytes > 0) {
    owned = std::make_unique<fstitch::cuda::StreamWorkspace>(device, fusion.plan.workspace_bytes, cu_stream);
    space = static_cast<uintptr_t>(owned->address());
  }
  fstitch::runtime::KernelArguments args;
  const std::vector<const void*> constants = fusion.cuda_constants(scope.context());
  for (const fstitch::PlanStep& step : fusion.plan.steps) {
    if (step.kind == fstitch::StepKind::kOpaque) {
      run_opaque_step(fusion, step.index, callback, inputs, outputs, space, stream, constants.data());
      continue;
    }
    args.pack(fusion.plan.kernels[step.index], inputs, outputs, space, constants.data());
    launch_on_cuda(fusion, step.index, args, cu_stream);
  }
}

// The kernel parameter bytes a CUDA context's driver and NVRTC both take; the classic 4 KiB
// when NVRTC does not load (its compile will then say why).
int context_kernel_param_bytes(fstitch::Context& context) {
  try {
    const std::shared_ptr<const fstitch::jit::Nvrtc> nvrtc = context.kernel_cache().nvrtc();
    return fstitch::kernel_param_bytes_for(context.device->driver().version(), nvrtc->version_major(),
                                           nvrtc->version_minor());
  } catch (const fstitch::Error&) {
    return fstitch::kClassicKernelParamBytes;
  }
}

void require_no_opaque_ops(const fst_fusion& fusion) {
  if (!fusion.plan.opaque_ops.empty()) {
    fail(StatusCode::kUnsupported,
         "the plan contains opaque operation " +
             fstitch::quote_name(fusion.graph.node(fusion.plan.opaque_ops.front()).name) +
             "; run it with fst_fusion_run_with_opaque, or follow the fusion's steps with the kernel "
             "handles");
  }
}

// fst_fusion_run and fst_fusion_run_with_opaque: check the buffers first (bad arguments come
// before anything else), then that plain runs meet no opaque step and callback runs have a
// callback, then run the steps.
void run_fusion(const fst_fusion* fusion, const void* const* inputs, size_t ninputs, void* const* outputs,
                size_t noutputs, void* workspace, void* stream, const fstitch::api::OpaqueCallback& callback,
                bool with_callback) {
  require_not_null(fusion, "fusion");
  fstitch::api::check_run_buffers(fusion->graph, inputs, ninputs, outputs, noutputs);
  fstitch::api::check_buffer_overlaps(
      fusion->graph, fusion->plan,
      fstitch::api::run_buffer_uses(fusion->graph, fusion->plan, inputs, outputs, workspace),
      fstitch::api::BufferNaming::kRunArrays);
  if (with_callback) {
    fstitch::api::require_callback_for(fusion->graph, fusion->plan.opaque_ops, callback);
  } else {
    require_no_opaque_ops(*fusion);
  }
  if (fusion->context->active_backend() == fstitch::Backend::kCuda) {
    run_on_cuda(*fusion, inputs, outputs, workspace, stream, callback);
    return;
  }
  std::vector<unsigned char> owned;
  auto* space = static_cast<unsigned char*>(workspace);
  if (space == nullptr && fusion->plan.workspace_bytes > 0) {
    owned.resize(fusion->plan.workspace_bytes);
    space = owned.data();
  }
  run_on_host(*fusion, inputs, outputs, space, callback);
}

}  // namespace

std::shared_ptr<const fstitch::jit::CompiledModule> fst_fusion::device_module(size_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device_modules_.empty()) {
    std::vector<fstitch::jit::CompileRequest> requests;
    for (size_t i = 0; i < kernel_sources.size(); ++i) {
      fstitch::jit::CompileRequest request;
      request.source = kernel_sources[i];
      request.name = plan.kernels[i].name + ".cu";
      request.arch = plan.options.target_sm;
      requests.push_back(std::move(request));
    }
    fstitch::CompileStats counted;
    try {
      device_modules_ = context->kernel_cache().compile_all(requests, &counted);
    } catch (...) {
      record_compiles(counted);  // what the requests that succeeded did still happened
      throw;
    }
    record_compiles(counted);
  }
  return device_modules_.at(index);
}

void fst_fusion::record_compiles(const fstitch::CompileStats& counted) const {
  compiled_ += counted;
  context->compiled.add(counted);
}

fstitch::CompileStats fst_fusion::compile_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

fst_fusion::fst_fusion() = default;
fst_fusion::~fst_fusion() = default;

const std::vector<std::unique_ptr<fstitch::cuda::LoadedKernel>>& fst_fusion::cuda_kernels() const {
  // Once loaded, the kernels never change: later runs read them without a lock. A failed load
  // leaves nothing behind, so the next run tries again (std::call_once would do the same, but
  // an exception out of it leaves the flag stuck under some runtimes, ThreadSanitizer's
  // pthread_once among them).
  if (cuda_loaded_.load(std::memory_order_acquire)) return cuda_kernels_;
  std::lock_guard<std::mutex> lock(cuda_mutex_);
  if (cuda_loaded_.load(std::memory_order_relaxed)) return cuda_kernels_;
  const fstitch::cuda::Device& device = *context->device;
  std::vector<std::unique_ptr<fstitch::cuda::LoadedKernel>> loaded;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const fstitch::KernelSpec& spec = plan.kernels[i].spec;
    loaded.push_back(fstitch::cuda::LoadedKernel::load(
        device.driver_ptr(), *device_module(i), plan.kernels[i].name, device.info().compute_capability(),
        plan.options.target_sm, device.info().handle, spec.dynamic_shared_bytes, spec.block_threads));
    const int per_multiprocessor = loaded.back()->blocks_per_multiprocessor().value_or(0);
    context->logger.log(
        fstitch::LogLevel::kDebug,
        "loaded kernel " + plan.kernels[i].name + " from its " +
            fstitch::cuda::image_kind_name(loaded.back()->image()) + ": " +
            std::to_string(per_multiprocessor) + " blocks of " + std::to_string(spec.block_threads) +
            " threads per multiprocessor, grid " +
            std::to_string(per_multiprocessor > 0 ? fstitch::launch_grid(plan.kernels[i], per_multiprocessor,
                                                                         device.info().multiprocessors)
                                                  : spec.grid_blocks) +
            " (planned " + std::to_string(spec.grid_blocks) + ")");
  }
  cuda_kernels_ = std::move(loaded);
  cuda_loaded_.store(true, std::memory_order_release);
  return cuda_kernels_;
}

std::vector<const void*> fst_fusion::cuda_constants(fstitch::cuda::CUcontext cuda_context) const {
  if (plan.constants.empty()) return {};
  {
    std::lock_guard<std::mutex> lock(constants_mutex_);
    if (!device_constants_) {
      std::vector<fstitch::cuda::HostConstant> host;
      for (size_t i = 0; i < plan.constants.size(); ++i)
        host.push_back({host_constants[i], fstitch::value_bytes(graph, plan.constants[i])});
      device_constants_ = std::make_unique<fstitch::cuda::DeviceConstants>(std::move(host));
    }
  }
  return device_constants_->in_context(*context->device, cuda_context);
}

std::shared_ptr<fstitch::host::HostModule> fst_fusion::host_module() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!host_module_) {
    fstitch::host::HostCompileOptions options;
    const std::string& dir = context->config.cache_dir;
    options.disk_cache = dir != "off";
    if (options.disk_cache) options.cache_dir = dir;
    const fstitch::Logger* log = &context->logger;
    options.warn = [log](const std::string& message) { log->log(fstitch::LogLevel::kWarn, message); };
    options.unit_kernel_bytes = context->config.host_unit_kernel_bytes;
    host_module_ = fstitch::host::HostModule::compile(host_source, options);
    record_compiles(host_module_->compile_stats());
    context->logger.log(fstitch::LogLevel::kDebug,
                        "host module of " + std::to_string(plan.kernels.size()) + " kernel(s): " +
                            std::to_string(host_module_->unit_count()) + " translation unit(s), " +
                            (host_module_->loaded_from_cache() ? "from the disk cache" : "compiled"));
  }
  return host_module_;
}

extern "C" {

FST_API fst_status fst_fuse_options_create(fst_fuse_options** out_options) {
  return guarded(__func__, [&] {
    require_not_null(out_options, "out_options");
    *out_options = new fst_fuse_options();
  });
}

FST_API void fst_fuse_options_destroy(fst_fuse_options* options) {
  delete options;
}

FST_API fst_status fst_fuse_options_set_policy(fst_fuse_options* options, fst_fusion_policy policy) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    switch (fstitch::api::enum_code(policy)) {
      case FST_POLICY_STITCH:
        options->options.policy = fstitch::FusionPolicy::kStitch;
        break;
      case FST_POLICY_LOOP:
        options->options.policy = fstitch::FusionPolicy::kLoop;
        break;
      case FST_POLICY_NONE:
        options->options.policy = fstitch::FusionPolicy::kNone;
        break;
      default:
        fail(StatusCode::kInvalidArgument, "policy " + std::to_string(fstitch::api::enum_code(policy)) +
                                               " is not an fst_fusion_policy (0 stitch, 1 loop, 2 none)");
    }
  });
}

FST_API fst_status fst_fuse_options_set_target_arch(fst_fuse_options* options, int sm) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    if (!fstitch::arch_params(sm)) {
      fail(StatusCode::kUnsupported,
           "target architecture sm_" + std::to_string(sm) + " is not supported (supported: 80, 90)");
    }
    options->options.target_sm = sm;
    options->target_set = true;
  });
}

FST_API fst_status fst_fuse_options_set_shared_memory_budget(fst_fuse_options* options, size_t bytes) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    if (bytes < 1024 || bytes > 227 * 1024) {
      fail(StatusCode::kInvalidArgument,
           "shared memory budget " + std::to_string(bytes) + " is outside 1024 .. 232448 bytes");
    }
    options->options.shared_budget = bytes;
  });
}

FST_API fst_status fst_fuse_options_set_register_cap(fst_fuse_options* options, int registers) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    if (registers < 32 || registers > 255) {
      fail(StatusCode::kInvalidArgument,
           "register cap " + std::to_string(registers) + " is outside 32 .. 255");
    }
    options->options.register_cap = registers;
  });
}

FST_API fst_status fst_fuse_options_set_device_model(fst_fuse_options* options, const char* model) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    require_not_null(model, "model");
    const std::optional<fstitch::ArchParams> arch = fstitch::arch_params_for_device(model);
    if (!arch) {
      fail(StatusCode::kUnsupported, "device model " + fstitch::quote_name(model) +
                                         " is not known (known: \"a100\", \"h100\", \"h200\")");
    }
    options->options.target_sm = arch->sm;
    options->options.device = arch;
    options->target_set = true;
    options->device_model_set = true;
  });
}

FST_API fst_status fst_fuse(const fst_graph* graph, const fst_fuse_options* options,
                            fst_fusion** out_fusion) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_fusion, "out_fusion");
    require_graph_ok(graph);
    fstitch::verify_graph(graph->graph);
    auto fusion = std::make_unique<fst_fusion>();
    fusion->context = graph->context;
    fstitch::FusionOptions fuse_options = options ? options->options : fstitch::FusionOptions{};
    if ((options == nullptr || !options->target_set) && fusion->context->device) {
      fuse_options.target_sm =
          fstitch::target_for_device(fusion->context->device->info().compute_capability());
    }
    if ((options == nullptr || !options->device_model_set) && fusion->context->device) {
      // The cost model plans for the device the fusion will run on, as it reports itself,
      // and the launches for what its driver and NVRTC take.
      if (const auto base = fstitch::arch_params(fuse_options.target_sm)) {
        fstitch::DeviceFacts facts = fusion->context->device->info().facts;
        facts.kernel_param_bytes = context_kernel_param_bytes(*fusion->context);
        fuse_options.device = fstitch::refine_with_device(*base, facts);
      }
    }
    fusion->graph = graph->graph;
    fusion->graph_serial = graph->serial;
    fusion->plan = fstitch::plan_fusion(fusion->graph, fuse_options);
    // Each kernel is emitted once; the module text (emit_module's), NVRTC's per-kernel programs
    // and the host backend's units are all made of these texts.
    const std::string prelude = fstitch::kernel_prelude();
    fusion->host_source.prelude = prelude;
    fusion->source = prelude;
    for (const fstitch::PlannedKernel& k : fusion->plan.kernels) {
      std::string kernel = fstitch::emit_kernel(fusion->graph, k);
      fusion->source += "\n" + kernel;
      fusion->kernel_sources.push_back(prelude + "\n" + kernel);
      fusion->host_source.kernels.push_back(std::move(kernel));
    }
    for (size_t i = 0; i < fusion->plan.kernels.size(); ++i) fusion->kernels.push_back({fusion.get(), i});
    for (fstitch::ValueId c : fusion->plan.constants)
      fusion->host_constants.push_back(fusion->graph.node(c).data->data());
    std::ostringstream info;
    info.imbue(std::locale::classic());
    info << "fused " << fusion->graph.size() << " values into " << fusion->plan.kernels.size()
         << " kernel(s) (policy " << fstitch::fusion_policy_name(fusion->plan.options.policy) << ", sm_"
         << fusion->plan.options.target_sm << "): " << fusion->plan.planned_bytes
         << " global bytes planned, lower bound " << fusion->plan.lower_bound_bytes << ", planned in "
         << fusion->plan.planning_seconds * 1e3 << " ms";
    fusion->context->logger.log(fstitch::LogLevel::kInfo, info.str());
    dump_requested(*fusion);
    *out_fusion = fusion.release();
  });
}

FST_API void fst_fusion_destroy(fst_fusion* fusion) {
  delete fusion;
}

FST_API fst_status fst_fusion_kernel_count(const fst_fusion* fusion, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_count, "out_count");
    *out_count = fusion->kernels.size();
  });
}

FST_API fst_status fst_fusion_kernel(const fst_fusion* fusion, size_t index, const fst_kernel** out_kernel) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_kernel, "out_kernel");
    fstitch::api::require_index("index", index, fusion->kernels.size(), "the fusion", "kernel(s)");
    *out_kernel = &fusion->kernels[index];
  });
}

FST_API fst_status fst_fusion_workspace_size(const fst_fusion* fusion, size_t* out_bytes) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_bytes, "out_bytes");
    *out_bytes = fusion->plan.workspace_bytes;
  });
}

FST_API fst_status fst_fusion_compile_stat(const fst_fusion* fusion, fst_compile_stat stat,
                                           uint64_t* out_value) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_value, "out_value");
    *out_value = fstitch::api::compile_stat_value(fusion->compile_stats(), stat);
  });
}

FST_API fst_status fst_fusion_planned_bytes(const fst_fusion* fusion, uint64_t* out_planned_bytes,
                                            uint64_t* out_lower_bound_bytes) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_planned_bytes, "out_planned_bytes");
    require_not_null(out_lower_bound_bytes, "out_lower_bound_bytes");
    *out_planned_bytes = fusion->plan.planned_bytes;
    *out_lower_bound_bytes = fusion->plan.lower_bound_bytes;
  });
}

FST_API fst_status fst_fusion_dump(const fst_fusion* fusion, char** out_text) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_text, "out_text");
    *out_text = copy_string(fstitch::dump_plan(fusion->graph, fusion->plan));
  });
}

FST_API fst_status fst_fusion_run(const fst_fusion* fusion, const void* const* inputs, size_t ninputs,
                                  void* const* outputs, size_t noutputs, void* workspace, void* stream) {
  return guarded(__func__, [&] {
    run_fusion(fusion, inputs, ninputs, outputs, noutputs, workspace, stream, {}, false);
  });
}

FST_API fst_status fst_fusion_run_with_opaque(const fst_fusion* fusion, const void* const* inputs,
                                              size_t ninputs, void* const* outputs, size_t noutputs,
                                              void* workspace, void* stream, fst_opaque_callback callback,
                                              void* user_data) {
  return guarded(__func__, [&] {
    run_fusion(fusion, inputs, ninputs, outputs, noutputs, workspace, stream, {callback, user_data}, true);
  });
}

FST_API fst_status fst_kernel_name(const fst_kernel* kernel, const char** out_name) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_name, "out_name");
    *out_name = planned(kernel).name.c_str();
  });
}

FST_API fst_status fst_kernel_source(const fst_kernel* kernel, const char** out_source) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_source, "out_source");
    *out_source = kernel->fusion->kernel_sources[kernel->index].c_str();
  });
}

FST_API fst_status fst_kernel_ptx(const fst_kernel* kernel, const char** out_ptx) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_ptx, "out_ptx");
    *out_ptx = kernel->fusion->device_module(kernel->index)->ptx.c_str();
  });
}

FST_API fst_status fst_kernel_cubin(const fst_kernel* kernel, const void** out_data, size_t* out_size) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_data, "out_data");
    require_not_null(out_size, "out_size");
    auto module = kernel->fusion->device_module(kernel->index);
    *out_data = module->cubin.data();
    *out_size = module->cubin.size();
  });
}

FST_API fst_status fst_kernel_launch_config(const fst_kernel* kernel, uint32_t out_grid[3],
                                            uint32_t out_block[3], size_t* out_dynamic_shared_bytes) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_grid, "out_grid");
    require_not_null(out_block, "out_block");
    require_not_null(out_dynamic_shared_bytes, "out_dynamic_shared_bytes");
    const fstitch::KernelSpec& s = planned(kernel).spec;
    out_grid[0] = static_cast<uint32_t>(s.grid_blocks);
    out_grid[1] = out_grid[2] = 1;
    out_block[0] = static_cast<uint32_t>(s.block_threads);
    out_block[1] = out_block[2] = 1;
    *out_dynamic_shared_bytes = s.dynamic_shared_bytes;
  });
}

FST_API fst_status fst_kernel_grid_for_occupancy(const fst_kernel* kernel, uint32_t blocks_per_multiprocessor,
                                                 uint32_t multiprocessors, uint32_t out_grid[3]) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_grid, "out_grid");
    if (blocks_per_multiprocessor == 0) {
      fail(StatusCode::kInvalidArgument, "blocks_per_multiprocessor is 0: not one block of kernel " +
                                             planned(kernel).name +
                                             " fits a multiprocessor, so it cannot launch");
    }
    if (multiprocessors == 0) fail(StatusCode::kInvalidArgument, "multiprocessors is 0");
    const int64_t grid = fstitch::launch_grid(planned(kernel), blocks_per_multiprocessor, multiprocessors);
    if (grid > std::numeric_limits<int32_t>::max()) {
      fail(StatusCode::kUnsupported, "kernel " + planned(kernel).name + " would launch " +
                                         std::to_string(grid) + " blocks; CUDA allows 1 .. 2147483647");
    }
    out_grid[0] = static_cast<uint32_t>(grid);
    out_grid[1] = out_grid[2] = 1;
  });
}

FST_API fst_status fst_kernel_param_count(const fst_kernel* kernel, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_count, "out_count");
    *out_count = planned(kernel).params.size();
  });
}

FST_API fst_status fst_kernel_param(const fst_kernel* kernel, size_t index, fst_param_kind* out_kind,
                                    size_t* out_index, fst_value* out_value) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_kind, "out_kind");
    require_not_null(out_index, "out_index");
    const auto& params = planned(kernel).params;
    fstitch::api::require_index("index", index, params.size(), "the kernel", "parameter(s)");
    *out_kind = static_cast<fst_param_kind>(params[index].kind);
    *out_index = params[index].index;
    if (out_value != nullptr) {
      // Scratch holds no graph value.
      *out_value =
          params[index].is_scratch()
              ? FST_VALUE_INVALID
              : fstitch::api::encode_value(kernel->fusion->graph_serial->value(), params[index].value);
    }
  });
}

FST_API fst_status fst_kernel_zeroed_workspace(const fst_kernel* kernel, size_t* out_offset,
                                               size_t* out_bytes) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_offset, "out_offset");
    require_not_null(out_bytes, "out_bytes");
    const fstitch::WorkspaceRange& zeroed = planned(kernel).zeroed_workspace;
    *out_offset = zeroed.bytes == 0 ? 0 : zeroed.offset;
    *out_bytes = zeroed.bytes;
  });
}

FST_API fst_status fst_kernel_estimated_bytes(const fst_kernel* kernel, uint64_t* out_read_bytes,
                                              uint64_t* out_written_bytes) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_read_bytes, "out_read_bytes");
    require_not_null(out_written_bytes, "out_written_bytes");
    *out_read_bytes = planned(kernel).spec.bytes_read;
    *out_written_bytes = planned(kernel).spec.bytes_written;
  });
}

FST_API fst_status fst_kernel_launch_kind(const fst_kernel* kernel, fst_launch_kind* out_kind) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_kind, "out_kind");
    switch (planned(kernel).launch) {
      case fstitch::LaunchKind::kRegular:
        *out_kind = FST_LAUNCH_REGULAR;
        break;
      case fstitch::LaunchKind::kCooperative:
        *out_kind = FST_LAUNCH_COOPERATIVE;
        break;
      case fstitch::LaunchKind::kCluster:
        *out_kind = FST_LAUNCH_CLUSTER;
        break;
    }
  });
}

FST_API fst_status fst_kernel_cluster_blocks(const fst_kernel* kernel, uint32_t* out_blocks) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_blocks, "out_blocks");
    const fstitch::PlannedKernel& k = planned(kernel);
    *out_blocks = k.launch == fstitch::LaunchKind::kCluster ? static_cast<uint32_t>(k.spec.split.blocks) : 1u;
  });
}

FST_API fst_status fst_kernel_function(const fst_kernel* kernel, void** out_function) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    require_not_null(out_function, "out_function");
    const fst_fusion& fusion = *kernel->fusion;
    if (!fusion.context->device) {
      fail(StatusCode::kUnsupported,
           "the context runs on the host backend; kernel functions exist on the CUDA "
           "backend only");
    }
    fstitch::cuda::ContextScope scope(*fusion.context->device);
    *out_function = fusion.cuda_kernels()[kernel->index]->function();
  });
}

FST_API fst_status fst_kernel_launch(const fst_kernel* kernel, void* const* args, size_t nargs,
                                     void* stream) {
  return guarded(__func__, [&] {
    require_not_null(kernel, "kernel");
    const fst_fusion& fusion = *kernel->fusion;
    const fstitch::PlannedKernel& k = planned(kernel);
    if (nargs != k.params.size()) {
      fail(StatusCode::kInvalidArgument, "nargs is " + std::to_string(nargs) + " but kernel " + k.name +
                                             " has " + std::to_string(k.params.size()) + " parameter(s)");
    }
    if (nargs > 0) require_not_null(args, "args");
    for (size_t i = 0; i < nargs; ++i) {
      if (args[i] == nullptr) fail(StatusCode::kInvalidArgument, "args[" + std::to_string(i) + "] is NULL");
    }
    fstitch::api::check_buffer_overlaps(fusion.graph, fusion.plan,
                                        fstitch::api::kernel_buffer_uses(fusion.graph, k, args),
                                        fstitch::api::BufferNaming::kKernelArgs);
    fstitch::runtime::KernelArguments arguments;
    arguments.assign(args, nargs);
    if (fusion.context->active_backend() == fstitch::Backend::kCuda) {
      fstitch::cuda::ContextScope scope(*fusion.context->device);
      launch_on_cuda(fusion, kernel->index, arguments, static_cast<fstitch::cuda::CUstream>(stream));
      return;
    }
    launch_on_host(fusion, *fusion.host_module(), kernel->index, arguments);
  });
}

}  // extern "C"
