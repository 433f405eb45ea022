// Leveled logging to a user callback or stderr.
#pragma once

#include <functional>
#include <string>

namespace fstitch {

enum class LogLevel : int { kOff = 0, kError = 1, kWarn = 2, kInfo = 3, kDebug = 4, kTrace = 5 };

// Receives enabled messages; empty means stderr.
using LogSink = std::function<void(LogLevel level, const char* message)>;

const char* log_level_name(LogLevel level);

// Parses "off", "error", "warn", "info", "debug", "trace" or a digit 0-5.
bool parse_log_level(const std::string& text, LogLevel* out);

class Logger {
 public:
  Logger() = default;
  Logger(LogLevel level, LogSink sink) : level_(level), sink_(std::move(sink)) {}

  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return level != LogLevel::kOff && level <= level_; }
  // Sends the message to the sink (stderr when none) if the level is enabled.
  void log(LogLevel level, const std::string& message) const;

 private:
  LogLevel level_ = LogLevel::kWarn;
  LogSink sink_;
};

}  // namespace fstitch
