#include "support/log.hpp"

#include <cstdio>

namespace fstitch {

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kOff:
      return "off";
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kTrace:
      return "trace";
  }
  return "?";
}

bool parse_log_level(const std::string& text, LogLevel* out) {
  for (int i = 0; i <= 5; ++i) {
    auto level = static_cast<LogLevel>(i);
    if (text == log_level_name(level) || text == std::to_string(i)) {
      *out = level;
      return true;
    }
  }
  return false;
}

void Logger::log(LogLevel level, const std::string& message) const {
  if (!enabled(level)) return;
  if (sink_) {
    sink_(level, message.c_str());
  } else {
    std::fprintf(stderr, "fstitch [%s] %s\n", log_level_name(level), message.c_str());
  }
}

}  // namespace fstitch
