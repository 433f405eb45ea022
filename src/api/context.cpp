#include "api/context.hpp"

#include "jit/kernel_cache.hpp"
#include "runtime/cuda/device.hpp"
#include "support/env.hpp"
#include "support/error.hpp"

namespace fstitch {

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kAuto:
      return "auto";
    case Backend::kCuda:
      return "cuda";
    case Backend::kHost:
      return "host";
  }
  return "?";
}

namespace {

std::shared_ptr<cuda::Device> open_device(const ContextConfig& c) {
  std::shared_ptr<const cuda::Driver> driver = cuda::load_driver(c.cuda_driver_path);
  cuda::DeviceInfo info = cuda::query_device(*driver, c.device);
  if (info.compute_capability() < 80) {
    fail(StatusCode::kNoDevice, "device " + std::to_string(info.ordinal) + " (" + info.name + ") is sm_" +
                                    std::to_string(info.compute_capability()) +
                                    "; fstitch needs sm_80 (Ampere) or newer");
  }
  return std::make_shared<cuda::Device>(std::move(driver), std::move(info));
}

}  // namespace

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
  if (auto backend = env_string("FSTITCH_BACKEND")) {
    if (*backend == "cuda") c.backend = Backend::kCuda;
    if (*backend == "host") c.backend = Backend::kHost;
  }
  c.cuda_driver_path = cuda::default_driver_path();
  return c;
}

Context::Context(ContextConfig c) : config(std::move(c)), logger(config.log_level, config.log_sink) {
  if (config.backend == Backend::kHost) return;
  if (config.backend == Backend::kCuda) {
    device = open_device(config);
    return;
  }
  try {
    device = open_device(config);
  } catch (const Error& e) {
    backend_reason = e.what();
  }
}

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
