// Shared pieces of the host runtime tests: the compiled test kernels, inputs, checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/host/host_module.hpp"
#include "runtime/host/object_cache.hpp"
#include "support/error.hpp"

// Whether `text` (a C string) contains `part`.
#define EXPECT_CONTAINS(text, part) EXPECT_PRED_FORMAT2(::testing::IsSubstring, part, text)

namespace fstitch::host::testing {

// The kernels of host_test_kernels.hpp, compiled once per process (through the build
// folder's cache, so once per build).
const HostModule& test_kernels();

// A one-kernel text: fst_fill(float* y, float value, int n) sets y[i] = value + i.
extern const char* const kSmallKernel;
// Launches fst_fill of kSmallKernel and checks what it wrote.
void expect_fills(const HostModule& module);

// A fresh folder for one test (a cache folder, scripts), removed afterwards.
class CacheFolder {
 public:
  CacheFolder() : folder_(std::filesystem::temp_directory_path()) {}
  std::string path() const { return folder_.path().string(); }

 private:
  TemporaryFolder folder_;
};

// Sets an environment variable for one scope, then restores it.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Uniform values in [low, high).
std::vector<float> random_floats(std::size_t count, float low, float high, std::uint32_t seed);
// Whole numbers in [low, high] as floats: sums of a few thousand of them are exact in any order.
std::vector<float> random_whole_floats(std::size_t count, int low, int high, std::uint32_t seed);

// Runs `body`, which must throw Error; returns it (a failed expectation when it does not).
Error catch_error(const std::function<void()>& body);

// Whether a death test's child died of a memory fault: SIGSEGV, or under AddressSanitizer,
// which reports the fault and exits, a failing exit status.
bool died_of_fault(int status);

// Both thread orders, for tests that must hold in either.
inline const ThreadOrder kBothOrders[] = {ThreadOrder::kForward, ThreadOrder::kReverse};
const char* order_name(ThreadOrder order);

}  // namespace fstitch::host::testing
