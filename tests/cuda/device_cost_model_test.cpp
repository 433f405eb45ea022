// A fusion made in a context with a CUDA device plans for that device as it reports itself:
// its name, SM count and memory bandwidth reach the cost model (plan/arch.hpp), unless the
// caller names a device model.
#include <string>
#include <utility>

#include "cuda/cuda_test_support.hpp"

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
