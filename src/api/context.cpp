#include "api/context.hpp"

#include "jit/kernel_cache.hpp"
#include "support/env.hpp"

namespace fstitch {

ContextConfig default_context_config() {
  ContextConfig c;
  if (auto level = env_string("FSTITCH_LOG")) {
    LogLevel parsed;
    if (parse_log_level(*level, &parsed)) c.log_level = parsed;
  }
  if (auto dir = env_string("FSTITCH_CACHE_DIR")) {
    c.cache_dir = *dir;
  } else if (auto xdg = env_string("XDG_CACHE_HOME")) {
    c.cache_dir = *xdg + "/fstitch";
  } else if (auto home = env_string("HOME")) {
    c.cache_dir = *home + "/.cache/fstitch";
  } else {
    c.cache_dir = "off";
  }
  if (auto order = env_string("FSTITCH_HOST_THREAD_ORDER")) c.host_reverse_thread_order = *order == "reverse";
  return c;
}

Context::Context(ContextConfig c) : config(std::move(c)), logger(config.log_level, config.log_sink) {}

Context::~Context() = default;

jit::KernelCache& Context::kernel_cache() {
  std::call_once(cache_once_, [this] {
    jit::KernelCacheOptions options;
    options.directory = config.cache_dir == "off" ? "off" : config.cache_dir + "/nvrtc";
    Logger* log = &logger;
    options.warn = [log](const std::string& message) { log->log(LogLevel::kWarn, message); };
    kernel_cache_ = std::make_unique<jit::KernelCache>(std::move(options));
  });
  return *kernel_cache_;
}

}  // namespace fstitch
