// Log levels, the logger's filtering and sinks, environment reading, and context defaults.
#include <gtest/gtest.h>

#include <cstdlib>
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
  EXPECT_EQ(default_context_config().backend, Backend::kAuto);
}

}  // namespace
}  // namespace fstitch
