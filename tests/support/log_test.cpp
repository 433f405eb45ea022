// Log levels, the logger's filtering and sinks, environment reading, and context defaults.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "api/context.hpp"
#include "support/env.hpp"
#include "support/log.hpp"

namespace fstitch {
namespace {

TEST(LogLevel, ParsesNamesAndDigits) {
  LogLevel level = LogLevel::kOff;
  EXPECT_TRUE(parse_log_level("debug", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  EXPECT_TRUE(parse_log_level("1", &level));
  EXPECT_EQ(level, LogLevel::kError);
  EXPECT_FALSE(parse_log_level("loud", &level));
  EXPECT_FALSE(parse_log_level("6", &level));
  EXPECT_EQ(level, LogLevel::kError) << "a failed parse leaves the level alone";
}

TEST(Logger, FiltersByLevelAndUsesTheSink) {
  std::vector<std::pair<LogLevel, std::string>> seen;
  Logger logger(LogLevel::kInfo, [&](LogLevel l, const char* m) { seen.emplace_back(l, m); });
  logger.log(LogLevel::kError, "e");
  logger.log(LogLevel::kInfo, "i");
  logger.log(LogLevel::kDebug, "d");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, LogLevel::kError);
  EXPECT_EQ(seen[1].second, "i");
  Logger off(LogLevel::kOff, [&](LogLevel, const char*) { ADD_FAILURE() << "off must log nothing"; });
  off.log(LogLevel::kError, "x");
}

TEST(Env, EmptyCountsAsUnset) {
  setenv("FSTITCH_TEST_VAR", "", 1);
  EXPECT_FALSE(env_string("FSTITCH_TEST_VAR").has_value());
  setenv("FSTITCH_TEST_VAR", "v", 1);
  EXPECT_EQ(*env_string("FSTITCH_TEST_VAR"), "v");
  unsetenv("FSTITCH_TEST_VAR");
}

TEST(ContextDefaults, FollowTheEnvironment) {
  setenv("FSTITCH_LOG", "trace", 1);
  setenv("FSTITCH_CACHE_DIR", "/tmp/fst-cache", 1);
  ContextConfig c = default_context_config();
  EXPECT_EQ(c.log_level, LogLevel::kTrace);
  EXPECT_EQ(c.cache_dir, "/tmp/fst-cache");
  unsetenv("FSTITCH_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(default_context_config().cache_dir, "/tmp/xdg/fstitch");
  unsetenv("XDG_CACHE_HOME");
  setenv("FSTITCH_LOG", "nonsense", 1);
  EXPECT_EQ(default_context_config().log_level, LogLevel::kWarn) << "bad values fall back to the default";
  unsetenv("FSTITCH_LOG");
}

// Sets an environment variable for the scope and restores the value it had before.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(ContextDefaults, BackendFollowsFstitchBackend) {
  {
    ScopedEnv env("FSTITCH_BACKEND", nullptr);
    EXPECT_EQ(default_context_config().backend, Backend::kAuto);
  }
  const std::pair<const char*, Backend> cases[] = {
      {"cuda", Backend::kCuda}, {"host", Backend::kHost}, {"auto", Backend::kAuto}, {"gpu", Backend::kAuto}};
  for (const auto& [text, backend] : cases) {
    ScopedEnv env("FSTITCH_BACKEND", text);
    EXPECT_EQ(default_context_config().backend, backend) << text;
  }
}

TEST(ContextDefaults, CudaDriverFollowsFstitchCudaDriver) {
  {
    ScopedEnv env("FSTITCH_CUDA_DRIVER", nullptr);
    EXPECT_EQ(default_context_config().cuda_driver_path, "libcuda.so.1");
  }
  ScopedEnv env("FSTITCH_CUDA_DRIVER", "/opt/driver/libcuda.so.1");
  EXPECT_EQ(default_context_config().cuda_driver_path, "/opt/driver/libcuda.so.1");
}

}  // namespace
}  // namespace fstitch
