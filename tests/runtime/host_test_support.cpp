#include "host_test_support.hpp"

#include <stdlib.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include "host_test_kernels.hpp"

namespace fstitch::host::testing {

const HostModule& test_kernels() {
  static const std::shared_ptr<HostModule> module = [] {
    HostCompileOptions options;
    options.cache_dir = FSTITCH_HOST_TEST_CACHE_DIR;
    return HostModule::compile(kTestKernels, options);
  }();
  return *module;
}

const char* const kSmallKernel = R"(
extern "C" __global__ void fst_fill(float* y, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = value + i;
}
FST_HOST_ENTRY(fst_fill)
)";

void expect_fills(const HostModule& module) {
  std::vector<float> y(100, 0.0f);
  float* yp = y.data();
  float value = 0.5f;
  int n = 100;
  void* params[] = {&yp, &value, &n};
  module.launch("fst_fill", {2}, {32}, 0, params);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(y[i], 0.5f + static_cast<float>(i));
}

ScopedEnvironment::ScopedEnvironment(const char* name, const char* value) : name_(name) {
  if (const char* old = getenv(name)) old_ = old;
  setenv(name, value, 1);
}

ScopedEnvironment::~ScopedEnvironment() {
  if (old_) {
    setenv(name_, old_->c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

std::vector<float> random_floats(std::size_t count, float low, float high, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(engine);
  return values;
}

std::vector<float> random_whole_floats(std::size_t count, int low, int high, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(distribution(engine));
  return values;
}

Error catch_error(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected an fstitch::Error";
  return Error(StatusCode::kOk, "");
}

bool died_of_fault(int status) {
#if defined(__SANITIZE_ADDRESS__)
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return true;
#endif
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

const char* order_name(ThreadOrder order) {
  return order == ThreadOrder::kForward ? "forward" : "reverse";
}

}  // namespace fstitch::host::testing
