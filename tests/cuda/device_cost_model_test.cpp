// A fusion made in a context with a CUDA device plans for that device as it reports itself:
// its name, SM count and memory bandwidth reach the cost model (plan/arch.hpp), unless the
// caller names a device model.
#include <string>
#include <utility>

#include "cuda/cuda_test_support.hpp"
#include "jit/nvrtc_loader.hpp"

namespace fstitch::cuda_test {
namespace {

class DeviceCostModel : public CudaSeamTest {};

std::string dump_of(const fst_fusion* fusion) {
  char* text = nullptr;
  EXPECT_EQ(fst_fusion_dump(fusion, &text), FST_OK) << fst_last_error_message();
  std::string dump = text ? text : "";
  fst_string_free(text);
  return dump;
}

uint32_t grid_of_first_kernel(const fst_fusion* fusion) {
  const fst_kernel* kernel = nullptr;
  EXPECT_EQ(fst_fusion_kernel(fusion, 0, &kernel), FST_OK);
  uint32_t grid[3] = {}, block[3] = {};
  size_t shared = 0;
  EXPECT_EQ(fst_kernel_launch_config(kernel, grid, block, &shared), FST_OK);
  return grid[0];
}

TEST_F(DeviceCostModel, TheDevicesOwnFactsReachThePlan) {
  ContextPtr context = cuda_context();
  GraphPtr graph = scale_graph(context.get(), 1 << 24);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  const std::string dump = dump_of(fusion.get());
  EXPECT_CONTAINS(dump, "target sm_90 (fstitch stand-in GPU sm_90), 1 kernel(s)");
  EXPECT_EQ(dump.find("H100 SXM"), std::string::npos) << "the target's default, not the device:\n" << dump;
  const uint32_t full = grid_of_first_kernel(fusion.get());

  // Half the SMs: a grid of one wave is half as large.
  fake().set_multiprocessors(66);
  ContextPtr smaller = cuda_context();
  GraphPtr graph2 = scale_graph(smaller.get(), 1 << 24);
  FusionPtr fusion2 = fuse(graph2.get(), FST_POLICY_STITCH);
  EXPECT_EQ(grid_of_first_kernel(fusion2.get()) * 2, full) << dump_of(fusion2.get());
}

TEST_F(DeviceCostModel, ANamedModelWinsOverTheDevice) {
  ContextPtr context = cuda_context();
  GraphPtr graph = scale_graph(context.get(), 1 << 20);
  fst_fuse_options* options = nullptr;
  ASSERT_EQ(fst_fuse_options_create(&options), FST_OK);
  ASSERT_EQ(fst_fuse_options_set_device_model(options, "h100"), FST_OK);
  fst_fusion* raw = nullptr;
  ASSERT_EQ(fst_fuse(graph.get(), options, &raw), FST_OK) << fst_last_error_message();
  fst_fuse_options_destroy(options);
  FusionPtr fusion(raw);
  EXPECT_CONTAINS(dump_of(fusion.get()), "target sm_90 (H100 SXM)");
}

}  // namespace
}  // namespace fstitch::cuda_test

namespace fstitch::cuda_test {
namespace {

// A row past 48 KiB of shared memory: the kernel is opted in to its dynamic shared memory on
// the device before it is launched with it, and its launch configuration says how much.
TEST_F(DeviceCostModel, LongRowsOptInToDynamicSharedMemory) {
  // An sm_80 device of eight SMs: the rows fill it many times over with a block each, and
  // without clusters a split row's groups meet through global memory, so a block keeps its
  // whole row.
  fake().set_compute_capability(8, 0);
  fake().set_multiprocessors(8);
  ContextPtr context = cuda_context();
  GraphPtr graph;
  FusionPtr fusion;
  std::vector<KernelInfo> kernels;
  // The first of these shapes whose plan keeps rows (or a split row's slices) in more than
  // 48 KiB of shared memory: the cost model decides between them and registers.
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{64, 16384}, {128, 13000}, {264, 30000}}) {
    graph = layer_norm_graph(context.get(), rows, cols);
    fusion = fuse(graph.get(), FST_POLICY_STITCH);
    kernels = kernels_of(fusion.get());
    ASSERT_EQ(kernels.size(), 1u) << dump_of(fusion.get());
    if (kernels[0].shared_bytes > 48u * 1024) break;
  }
  ASSERT_GT(kernels[0].shared_bytes, 48u * 1024) << dump_of(fusion.get());
  RunBuffers buffers(graph.get());
  fake().clear_records();
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, nullptr), FST_OK) << fst_last_error_message();
  const size_t opt_in = fake().find_call("cuKernelSetAttribute");
  size_t launch = fake().find_call("cuLaunchKernel");
  if (launch == SIZE_MAX) launch = fake().find_call("cuLaunchKernelEx");
  ASSERT_NE(opt_in, SIZE_MAX) << "no opt-in";
  ASSERT_NE(launch, SIZE_MAX);
  EXPECT_LT(opt_in, launch);
  ASSERT_EQ(fake().launches().size(), 1u);
  EXPECT_EQ(fake().launches()[0].shared_bytes, kernels[0].shared_bytes);
}

}  // namespace
}  // namespace fstitch::cuda_test

namespace fstitch::cuda_test {
namespace {

// 300 independent scalings of tensors of their own: two pointers each, 600 in all.
GraphPtr many_scalings(fst_context* context) {
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_create(context, &graph), FST_OK);
  for (int i = 0; i < 300; ++i) {
    const int64_t dims[1] = {1000 + i};
    const std::string n = std::to_string(i);
    fst_value x = fst_input(graph, ("x" + n).c_str(), FST_F32, 1, dims);
    fst_value y = fst_binary(graph, FST_BINARY_MUL, x, fst_constant_f64(graph, FST_F32, 2.0));
    EXPECT_EQ(fst_output(graph, ("y" + n).c_str(), y), FST_OK) << fst_last_error_message();
  }
  return GraphPtr(graph);
}

size_t launches_of(fst_context* context) {
  GraphPtr graph = many_scalings(context);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  size_t kernels = 0;
  EXPECT_EQ(fst_fusion_kernel_count(fusion.get(), &kernels), FST_OK);
  return kernels;
}

// The parameter space a launch may fill is what the context's driver and NVRTC both take:
// from CUDA 12.1 on, 32764 bytes, so 600 pointers go in one packed launch (the classic 4 KiB
// holds 512; plan/arch's kernel_param_bytes_for has the rule, tested in tests/plan). The
// stand-in driver says 13.0 (a process keeps the driver it loaded first).
TEST_F(DeviceCostModel, LaunchesFillTheParameterSpaceTheDriverTakes) {
  const std::shared_ptr<const jit::Nvrtc> nvrtc = jit::system_nvrtc();
  ASSERT_GE(nvrtc->version_major() * 10 + nvrtc->version_minor(), 121)
      << "this test needs NVRTC 12.1 or newer";
  ContextPtr context = cuda_context();
  EXPECT_EQ(launches_of(context.get()), 1u);
}

}  // namespace
}  // namespace fstitch::cuda_test
