// The cache key: its form, its stability, and that every input changes it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fstitch.h"
#include "jit/cache_key.hpp"

namespace fstitch::jit {
namespace {

CompileRequest base_request() {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n";
  request.name = "k.cu";
  request.arch = 80;
  request.options = {"-lineinfo"};
  return request;
}

TEST(CacheKey, IsThirtyTwoLowercaseHexDigitsAndStable) {
  const std::string key = cache_key("13.0", base_request());
  ASSERT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
  EXPECT_EQ(cache_key("13.0", base_request()), key);
}

TEST(CacheKey, EveryInputChangesIt) {
  std::set<std::string> keys;
  keys.insert(cache_key("13.0", base_request()));
  keys.insert(cache_key("12.8", base_request()));

  CompileRequest request = base_request();
  request.source += " ";
  keys.insert(cache_key("13.0", request));

  request = base_request();
  request.name = "other.cu";
  keys.insert(cache_key("13.0", request));

  request = base_request();
  request.arch = 90;
  keys.insert(cache_key("13.0", request));

  request = base_request();
  request.options = {"-lineinfo", "--fmad=false"};
  keys.insert(cache_key("13.0", request));

  request = base_request();
  request.options = {};
  keys.insert(cache_key("13.0", request));

  // Field boundaries are unambiguous: moving text between fields changes the key.
  request = base_request();
  request.options = {"-line", "info"};
  keys.insert(cache_key("13.0", request));

  EXPECT_EQ(keys.size(), 8u);
}

TEST(CacheKey, LibraryVersionComesFromTheHeader) {
  const std::string expected = std::to_string(FST_VERSION_MAJOR) + "." + std::to_string(FST_VERSION_MINOR) +
                               "." + std::to_string(FST_VERSION_PATCH);
  EXPECT_EQ(library_version_string(), expected);
}

}  // namespace
}  // namespace fstitch::jit
