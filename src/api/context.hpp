// The context behind fst_context: configuration shared by the graphs created from it.
#pragma once

#include <memory>
#include <string>

#include "support/log.hpp"

namespace fstitch {

enum class Backend : int { kAuto = 0, kCuda = 1, kHost = 2 };

struct ContextConfig {
  Backend backend = Backend::kAuto;
  int device = 0;
  LogLevel log_level = LogLevel::kWarn;
  LogSink log_sink;           // empty: stderr
  std::string cache_dir;      // resolved directory, or "off"
};

// Defaults, with FSTITCH_LOG and FSTITCH_CACHE_DIR / XDG_CACHE_HOME / HOME applied.
ContextConfig default_context_config();

struct Context {
  explicit Context(ContextConfig c) : config(std::move(c)), logger(config.log_level, config.log_sink) {}
  ContextConfig config;
  Logger logger;
};

}  // namespace fstitch
