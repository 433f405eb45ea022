// The context behind fst_context: configuration shared by the graphs created from it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "runtime/host/host_options.hpp"
#include "support/compile_stats.hpp"
#include "support/log.hpp"

namespace fstitch::jit {
class KernelCache;
}
namespace fstitch::cuda {
class Device;
}

namespace fstitch {

enum class Backend : int { kAuto = 0, kCuda = 1, kHost = 2 };

struct ContextConfig {
  Backend backend = Backend::kAuto;
  int device = 0;
  LogLevel log_level = LogLevel::kWarn;
  LogSink log_sink;       // empty: stderr
  std::string cache_dir;  // resolved directory, or "off"
  // The order in which the host backend runs the threads of a block between barriers
  // (FSTITCH_HOST_THREAD_ORDER=reverse): running tests both ways exposes missing barriers.
  bool host_reverse_thread_order = false;
  // Kernel text per translation unit when the host backend splits a large plan's module.
  std::size_t host_unit_kernel_bytes = host::kDefaultUnitKernelBytes;
  // The CUDA driver library to load (FSTITCH_CUDA_DRIVER, default libcuda.so.1).
  std::string cuda_driver_path;
};

const char* backend_name(Backend b);

// Defaults, with FSTITCH_BACKEND, FSTITCH_LOG, FSTITCH_CACHE_DIR / XDG_CACHE_HOME / HOME,
// FSTITCH_HOST_THREAD_ORDER and FSTITCH_CUDA_DRIVER applied.
ContextConfig default_context_config();

struct Context {
  // Resolves the backend: kCuda loads the driver and opens the device (throwing
  // Error(kNoDriver) or Error(kNoDevice) when it cannot); kAuto picks CUDA when that works
  // and the host otherwise, logging the choice and the reason.
  explicit Context(ContextConfig c);
  ~Context();
  ContextConfig config;
  Logger logger;
  std::shared_ptr<cuda::Device> device;  // set when runs go to the CUDA backend
  std::string backend_reason;            // why auto chose the host backend
  // kCuda or kHost, never kAuto.
  Backend active_backend() const { return device ? Backend::kCuda : Backend::kHost; }

  // The NVRTC kernel cache of this context (memory + the disk cache in config.cache_dir).
  jit::KernelCache& kernel_cache();

  // What the compiles of this context's fusions did (NVRTC modules and host modules alike),
  // added by each fusion as its modules are compiled or found (fst_context_compile_stat).
  AtomicCompileStats compiled;

 private:
  std::once_flag cache_once_;
  std::unique_ptr<jit::KernelCache> kernel_cache_;
};

}  // namespace fstitch
