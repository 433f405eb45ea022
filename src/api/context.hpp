// The context behind fst_context: configuration shared by the graphs created from it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "support/log.hpp"

namespace fstitch::jit {
class KernelCache;
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
};

// Defaults, with FSTITCH_LOG and FSTITCH_CACHE_DIR / XDG_CACHE_HOME / HOME applied.
ContextConfig default_context_config();

struct Context {
  explicit Context(ContextConfig c);
  ~Context();
  ContextConfig config;
  Logger logger;

  // The NVRTC kernel cache of this context (memory + the disk cache in config.cache_dir).
  jit::KernelCache& kernel_cache();

 private:
  std::once_flag cache_once_;
  std::unique_ptr<jit::KernelCache> kernel_cache_;
};

}  // namespace fstitch
