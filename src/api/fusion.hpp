// The objects behind fst_fusion and fst_kernel: a plan, its generated module, and the
// compiled forms of the module (NVRTC for the GPU, the host compiler for the host backend),
// each built once on first use.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/context.hpp"
#include "api/handles.hpp"
#include "fstitch.h"
#include "ir/graph.hpp"
#include "plan/plan.hpp"
#include "runtime/cuda/driver_api.hpp"
#include "runtime/host/module_units.hpp"

namespace fstitch {
namespace jit {
struct CompiledModule;
}
namespace host {
class HostModule;
}
namespace cuda {
class LoadedKernel;
class DeviceConstants;
}  // namespace cuda
}  // namespace fstitch

struct fst_fuse_options {
  fstitch::FusionOptions options;
  bool target_set = false;
  bool device_model_set = false;  // fst_fuse_options_set_device_model
};

struct fst_kernel {
  const fst_fusion* fusion = nullptr;
  size_t index = 0;
};

struct fst_fusion {
  std::shared_ptr<fstitch::Context> context;
  fstitch::Graph graph;  // a copy: the fusion does not refer to the caller's graph
  std::shared_ptr<const fstitch::api::GraphSerial> graph_serial;  // keeps the graph's values distinct
  fstitch::FusionPlan plan;
  std::string source;                           // all kernels in one module (FSTITCH_DUMP=cuda)
  fstitch::host::HostModuleSource host_source;  // the prelude and each kernel: what the host backend compiles
  std::vector<std::string> kernel_sources;      // prelude + one kernel: what NVRTC compiles, one per kernel
  std::vector<fst_kernel> kernels;
  // Where each of plan.constants is on the host: its data in `graph`, in index order
  // (FST_PARAM_CONSTANT arguments on the host backend).
  std::vector<const void*> host_constants;

  // NVRTC output of kernel `index` for plan.options.target_sm. The first request compiles
  // every kernel of the plan, in parallel.
  std::shared_ptr<const fstitch::jit::CompiledModule> device_module(size_t index) const;
  // The host backend's module, compiled on first request.
  std::shared_ptr<fstitch::host::HostModule> host_module() const;
  // What compiling this fusion's modules did so far (NVRTC and host; fst_fusion_compile_stat).
  fstitch::CompileStats compile_stats() const;
  // Every kernel loaded into the context's CUDA driver (compiled first if need be), with the
  // occupancy of each at its block size, on first request; later calls take no lock. Needs
  // context->device, current on this thread (a cuda::ContextScope).
  const std::vector<std::unique_ptr<fstitch::cuda::LoadedKernel>>& cuda_kernels() const;

  // The device address of each of plan.constants in CUDA context `cuda_context` (current on
  // this thread: a cuda::ContextScope), uploaded on the first request in each context and
  // freed with the fusion. Needs context->device.
  std::vector<const void*> cuda_constants(fstitch::cuda::CUcontext cuda_context) const;

  fst_fusion();
  ~fst_fusion();

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const fstitch::jit::CompiledModule>> device_modules_;
  mutable std::shared_ptr<fstitch::host::HostModule> host_module_;
  mutable fstitch::CompileStats compiled_;  // guarded by mutex_
  // Adds what a compile of this fusion's modules did to its count and its context's; under mutex_.
  void record_compiles(const fstitch::CompileStats& counted) const;
  mutable std::mutex cuda_mutex_;  // held only while the kernels are loaded
  mutable std::atomic<bool> cuda_loaded_{false};
  mutable std::vector<std::unique_ptr<fstitch::cuda::LoadedKernel>> cuda_kernels_;
  mutable std::mutex constants_mutex_;  // held while device_constants_ is created
  mutable std::unique_ptr<fstitch::cuda::DeviceConstants> device_constants_;
};
