// Binding a loaded object to the runtime's service table (fst_host_bind). Loading a file that
// is already loaded (a cache hit for a text another module compiled) gives the same object,
// whose kernels may be running on other threads: a later bind must not store the table again.
#include <dlfcn.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "host_test_support.hpp"
#include "runtime/host/host_abi.hpp"
#include "runtime/host/object_cache.hpp"

namespace fstitch::host::testing {
namespace {

using BindFunction = unsigned int (*)(const fst_host_api*);

const char* const kFillKernel = R"(
extern "C" __global__ void fst_fill_index(float* y) { y[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }
FST_HOST_ENTRY(fst_fill_index)
)";

TEST(HostBind, ALoadedObjectKeepsTheTableItWasFirstBoundTo) {
  const TemporaryFolder cache(std::filesystem::temp_directory_path());
  HostCompileOptions options;
  options.cache_dir = cache.path().string();
  const std::shared_ptr<HostModule> module = HostModule::compile(kFillKernel, options);

  // A second load of the file, as the runtime makes for a cache hit: the same object.
  void* again = dlopen(module->object_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(again, nullptr) << dlerror();
  const auto bind = reinterpret_cast<BindFunction>(dlsym(again, "fst_host_bind"));
  ASSERT_NE(bind, nullptr);
  EXPECT_EQ(bind(&host_api()), FST_HOST_ABI_VERSION);  // the same table again: accepted, nothing stored
  const fst_host_api other = host_api();               // another table of this ABI version
  EXPECT_EQ(bind(&other), 0u);
  dlclose(again);

  std::vector<float> y(64, -1.0f);
  float* yp = y.data();
  void* params[] = {&yp};
  module->launch("fst_fill_index", {2}, {32}, 0, params);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], static_cast<float>(i % 32)) << i;
}

}  // namespace
}  // namespace fstitch::host::testing
