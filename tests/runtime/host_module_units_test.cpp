// Generated modules split into translation units: the split itself (whole kernels, in
// order, each unit with the prelude), a module that fits compiled exactly as its joined text
// was, and split modules whose kernels all run correctly from one linked object, with
// barriers and shuffles in every unit (at -O0 too, where the emulation's inline functions are
// real calls that one unit's copy serves for all).
#include <string>
#include <vector>

#include "host_test_support.hpp"
#include "runtime/host/compiler.hpp"
#include "runtime/host/module_units.hpp"

namespace fstitch::host::testing {
namespace {

constexpr unsigned int kThreads = 64;

const char* const kPrelude = R"(// test prelude
#define FST_TEST_SCALE 2.0f
static __device__ __forceinline__ float fst_twice(float v) { return v * FST_TEST_SCALE; }
)";

// Kernel `index`: y[t] = mirrored(t) + mirrored(t ^ 1), mirrored(t) = 2 (63 - t) + index,
// through shared memory, a barrier and a shuffle; threadIdx is read again after both.
std::string kernel_text(int index) {
  const std::string name = "fst_unit_k" + std::to_string(index);
  return "extern \"C\" __global__ void " + name + "(float* y) {\n" +
         "  FST_SHARED(float, tile, 64);\n"
         "  tile[threadIdx.x] = fst_twice((float)threadIdx.x) + " +
         std::to_string(index) +
         ".0f;\n"
         "  __syncthreads();\n"
         "  const float mirrored = tile[63 - threadIdx.x];\n"
         "  const float sum = mirrored + __shfl_xor_sync(0xffffffffu, mirrored, 1);\n"
         "  y[blockIdx.x * 64 + threadIdx.x] = sum;\n"
         "}\n"
         "FST_HOST_ENTRY(" +
         name + ")\n";
}

HostModuleSource module_source(int kernels) {
  HostModuleSource source{kPrelude, {}};
  for (int i = 0; i < kernels; ++i) source.kernels.push_back(kernel_text(i));
  return source;
}

std::string joined(const HostModuleSource& source) {
  std::string text = source.prelude;
  for (const std::string& kernel : source.kernels) text += "\n" + kernel;
  return text;
}

void expect_kernel_runs(const HostModule& module, int index, ThreadOrder order) {
  std::vector<float> y(2 * kThreads, -1.0f);
  float* yp = y.data();
  void* params[] = {&yp};
  HostLaunchOptions options;
  options.order = order;
  module.launch("fst_unit_k" + std::to_string(index), {2}, {kThreads}, 0, params, options);
  for (unsigned int i = 0; i < 2 * kThreads; ++i) {
    const int t = static_cast<int>(i % kThreads);
    const float expected = 2.0f * static_cast<float>(126 - t - (t ^ 1)) + 2.0f * static_cast<float>(index);
    ASSERT_EQ(y[i], expected) << "kernel " << index << ", element " << i << ", " << order_name(order);
  }
}

TEST(HostModuleUnits, WholeKernelsInOrderEachUnitWithThePrelude) {
  const HostModuleSource source = module_source(5);
  const std::size_t kernel_bytes = source.kernels[0].size();
  // Two kernels fit in a unit, a third does not.
  const std::vector<std::string> units = split_module_units(source, 2 * kernel_bytes + kernel_bytes / 2);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0], source.prelude + "\n" + source.kernels[0] + "\n" + source.kernels[1]);
  EXPECT_EQ(units[1], source.prelude + "\n" + source.kernels[2] + "\n" + source.kernels[3]);
  EXPECT_EQ(units[2], source.prelude + "\n" + source.kernels[4]);
  // A kernel larger than the limit still gets a unit, of its own.
  EXPECT_EQ(split_module_units(source, 1).size(), 5u);
  // Everything fits: one unit, the module text as emit_module joins it.
  EXPECT_EQ(split_module_units(source, 5 * kernel_bytes), std::vector<std::string>{joined(source)});
  EXPECT_EQ(split_module_units(HostModuleSource{kPrelude, {}}, 1), std::vector<std::string>{kPrelude});
  EXPECT_EQ(unit_compile_parallelism(0), 1u);
  EXPECT_EQ(unit_compile_parallelism(1), 1u);
  EXPECT_LE(unit_compile_parallelism(1000), 1000u);
}

// The unsplit path is the path of the joined text: the same cache entry, so the same
// command and object.
TEST(HostModuleUnits, AModuleThatFitsIsCompiledAsItsJoinedText) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  const HostModuleSource source = module_source(3);
  const auto from_text = HostModule::compile(joined(source), options);
  EXPECT_FALSE(from_text->loaded_from_cache());
  const std::uint64_t before = host_compiler_process_count();
  const auto from_kernels = HostModule::compile(source, options);
  EXPECT_TRUE(from_kernels->loaded_from_cache());
  EXPECT_EQ(host_compiler_process_count(), before);
  EXPECT_EQ(from_kernels->object_path(), from_text->object_path());
  EXPECT_EQ(from_kernels->unit_count(), 1u);
  for (int k = 0; k < 3; ++k) expect_kernel_runs(*from_kernels, k, ThreadOrder::kForward);
}

class HostModuleSplit : public ::testing::TestWithParam<const char*> {};

TEST_P(HostModuleSplit, EveryKernelRunsFromTheLinkedObject) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  options.optimization = GetParam();
  const HostModuleSource source = module_source(6);
  options.unit_kernel_bytes = 2 * source.kernels[0].size();  // the test seam: two kernels a unit
  const auto module = HostModule::compile(source, options);
  EXPECT_FALSE(module->loaded_from_cache());
  EXPECT_EQ(module->unit_count(), 3u);
  for (int k = 0; k < 6; ++k) {
    for (ThreadOrder order : kBothOrders) expect_kernel_runs(*module, k, order);
  }
  // The split object is cached like any other, under a key of its units.
  const std::uint64_t before = host_compiler_process_count();
  const auto again = HostModule::compile(source, options);
  EXPECT_TRUE(again->loaded_from_cache());
  EXPECT_EQ(host_compiler_process_count(), before);
  EXPECT_EQ(again->unit_count(), 3u);
  EXPECT_EQ(again->object_path(), module->object_path());
  expect_kernel_runs(*again, 5, ThreadOrder::kForward);
  // Another split of the same text is another object.
  options.unit_kernel_bytes = 3 * source.kernels[0].size();
  const auto other = HostModule::compile(source, options);
  EXPECT_EQ(other->unit_count(), 2u);
  EXPECT_NE(other->object_path(), module->object_path());
}

INSTANTIATE_TEST_SUITE_P(Optimization, HostModuleSplit, ::testing::Values("-O0", "-O1"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param).substr(1);
                         });

TEST(HostModuleUnits, AFailingUnitIsReportedWithItsCommandAndLog) {
  HostCompileOptions options;
  options.disk_cache = false;
  HostModuleSource source = module_source(4);
  source.kernels[2] =
      "extern \"C\" __global__ void fst_unit_bad(float* y) { y[0] = undeclared_in_unit; }\n"
      "FST_HOST_ENTRY(fst_unit_bad)\n";
  options.unit_kernel_bytes = 1;  // a unit per kernel
  const Error error = catch_error([&] { HostModule::compile(source, options); });
  EXPECT_EQ(error.code(), StatusCode::kCompile);
  EXPECT_CONTAINS(error.what(), "unit2.cpp");
  EXPECT_CONTAINS(error.what(), " failed:\n");
  EXPECT_CONTAINS(error.what(), "undeclared_in_unit");
}

}  // namespace
}  // namespace fstitch::host::testing
