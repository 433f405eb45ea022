// The CUDA backend sizes each grid from the occupancy of the compiled kernel: the driver's
// occupancy calculator, asked once per loaded kernel, and the planned kernel's grid policy.
// The stand-in answers the calculator from the registers a test gives a kernel.
#include <algorithm>
#include <string>

#include "api/fusion.hpp"
#include "common/reduction_graphs.hpp"
#include "cuda/cuda_test_support.hpp"
#include "jit/compile.hpp"
#include "plan/launch_grid.hpp"
#include "runtime/cuda/kernel_image.hpp"
#include "runtime/cuda/launch.hpp"

namespace fstitch::cuda_test {
namespace {

constexpr int kMultiprocessors = 132;  // the stand-in's default

// Resident blocks per sm_90 multiprocessor of `block` threads at `registers` per thread and no
// shared memory: registers are allocated per warp in units of 256.
int sm90_blocks_per_multiprocessor(int block, int registers) {
  const int warps = (block + 31) / 32;
  const int per_warp = (registers * 32 + 255) / 256 * 256;
  return std::min({65536 / per_warp / warps, 2048 / block, 32});
}

class OccupancyGrid : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    context_ = cuda_context();
  }
  // Fuses layer norm over rows x cols into one kernel and gives the kernel `registers`.
  void fuse_layer_norm(int64_t rows, int64_t cols, int registers) {
    graph_ = layer_norm_graph(context_.get(), rows, cols);
    fusion_ = fuse(graph_.get(), FST_POLICY_STITCH);
    ASSERT_EQ(fusion_->plan.kernels.size(), 1u);
    ASSERT_EQ(fst_fusion_kernel(fusion_.get(), 0, &kernel_), FST_OK);
    fake().set_kernel_registers(planned().name.c_str(), registers);
  }
  // Fuses a Sinkhorn step over rows x cols bf16 (one cooperative kernel with column totals)
  // and gives the kernel `registers`.
  void fuse_sinkhorn(int64_t rows, int64_t cols, int registers) {
    graph_ = parsed_graph(context_.get(), testing::sinkhorn_step(rows, cols, DType::kBF16));
    fusion_ = fuse(graph_.get(), FST_POLICY_STITCH);
    ASSERT_EQ(fusion_->plan.kernels.size(), 1u) << dump_plan(fusion_->graph, fusion_->plan);
    ASSERT_EQ(fst_fusion_kernel(fusion_.get(), 0, &kernel_), FST_OK);
    fake().set_kernel_registers(planned().name.c_str(), registers);
  }
  const PlannedKernel& planned() const { return fusion_->plan.kernels[0]; }
  // Runs the fusion once and returns the grid its one launch used.
  unsigned run_and_get_grid() {
    RunBuffers buffers(graph_.get());
    EXPECT_EQ(run(fusion_.get(), buffers, nullptr, nullptr), FST_OK) << fst_last_error_message();
    const auto launches = fake().launches();
    EXPECT_FALSE(launches.empty());
    return launches.empty() ? 0 : launches.back().grid[0];
  }
  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
  const fst_kernel* kernel_ = nullptr;
};

TEST_F(OccupancyGrid, AKernelLaunchesOneWaveOfWhatReallyFits) {
  fuse_layer_norm(8192, 4096, 34);
  const KernelSpec& s = planned().spec;
  const int real = sm90_blocks_per_multiprocessor(s.block_threads, 34);
  ASSERT_GT(real, s.planned_blocks_per_sm) << "the estimate is meant to be conservative here";
  ASSERT_GT(s.work_units, int64_t{real} * kMultiprocessors) << "enough work for more than one wave";
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(real * kMultiprocessors));
  // The planned grid is still what the launch configuration reports.
  uint32_t grid[3] = {}, block[3] = {};
  size_t shared = 0;
  ASSERT_EQ(fst_kernel_launch_config(kernel_, grid, block, &shared), FST_OK);
  EXPECT_EQ(grid[0], static_cast<uint32_t>(s.grid_blocks));
  // And fst_kernel_grid_for_occupancy gives the launcher's grid at that occupancy.
  uint32_t resized[3] = {};
  ASSERT_EQ(fst_kernel_grid_for_occupancy(kernel_, static_cast<uint32_t>(real), kMultiprocessors, resized),
            FST_OK);
  EXPECT_EQ(resized[0], static_cast<uint32_t>(real * kMultiprocessors));
  EXPECT_EQ(resized[1], 1u);
  EXPECT_EQ(resized[2], 1u);
}

TEST_F(OccupancyGrid, FewerWorkUnitsThanAWaveLaunchTheWorkUnits) {
  fuse_layer_norm(200, 4096, 34);
  const KernelSpec& s = planned().spec;
  ASSERT_LT(s.work_units, int64_t{sm90_blocks_per_multiprocessor(s.block_threads, 34)} * kMultiprocessors);
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(s.work_units));
}

TEST_F(OccupancyGrid, TheOccupancyIsAskedOncePerLoadedKernel) {
  fuse_layer_norm(8192, 4096, 64);
  const unsigned first = run_and_get_grid();
  EXPECT_EQ(first, static_cast<unsigned>(sm90_blocks_per_multiprocessor(planned().spec.block_threads, 64) *
                                         kMultiprocessors));
  const size_t queries = fake().call_count("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  EXPECT_EQ(queries, 1u);
  EXPECT_EQ(run_and_get_grid(), first);
  // Far-apart addresses standing for device buffers (the stand-in never dereferences them).
  std::vector<void*> args;
  for (size_t i = 0; i < planned().params.size(); ++i)
    args.push_back(reinterpret_cast<void*>((uintptr_t{1} << 40) + (uintptr_t{i} << 32)));
  ASSERT_EQ(fst_kernel_launch(kernel_, args.data(), args.size(), nullptr), FST_OK)
      << fst_last_error_message();
  EXPECT_EQ(fake().launches().back().grid[0], first);  // fst_kernel_launch sizes it the same way
  EXPECT_EQ(fake().call_count("cuOccupancyMaxActiveBlocksPerMultiprocessor"), queries);
  // It was asked with the launch's block size and dynamic shared memory, before any launch.
  const size_t query = fake().find_call("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  EXPECT_LT(query, fake().launches().front().call_index);
}

TEST_F(OccupancyGrid, AFixedGridIsUntouched) {
  fuse_layer_norm(8192, 4096, 34);
  // A schedule whose code assumes its grid (none is planned today; the policy says so).
  const_cast<PlannedKernel&>(planned()).spec.grid_policy = GridPolicy::kFixed;
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(planned().spec.grid_blocks));
}

// A kernel with column totals keeps its planned grid unless its plan gives it a ceiling the
// partials are placed for: then it grows to the compiled kernel's wave, up to the ceiling.
// On the stand-in a Sinkhorn step of [8192, 512] bf16 is one cooperative kernel of 396 blocks
// planned from its register estimate, with a ceiling of 528 (what the model scores best).
TEST_F(OccupancyGrid, AColumnTotalGridGrowsToItsCeilingWhereMoreBlocksFit) {
  fuse_sinkhorn(8192, 512, 40);
  const KernelSpec& s = planned().spec;
  ASSERT_EQ(s.grid_policy, GridPolicy::kFixed);
  ASSERT_GT(s.grid_ceiling, s.grid_blocks) << dump_plan(fusion_->graph, fusion_->plan);
  const int real = sm90_blocks_per_multiprocessor(s.block_threads, 40);
  ASSERT_GE(int64_t{real} * kMultiprocessors, s.grid_ceiling);
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(s.grid_ceiling));
  EXPECT_EQ(fake().launches().back().cooperative, 1);
  uint32_t grid[3] = {0, 0, 0};
  ASSERT_EQ(fst_kernel_grid_for_occupancy(kernel_, static_cast<uint32_t>(real), kMultiprocessors, grid),
            FST_OK);
  EXPECT_EQ(grid[0], static_cast<uint32_t>(s.grid_ceiling));
  ASSERT_EQ(fst_kernel_grid_for_occupancy(kernel_, static_cast<uint32_t>(s.planned_blocks_per_sm),
                                          kMultiprocessors, grid),
            FST_OK);
  EXPECT_EQ(grid[0], static_cast<uint32_t>(s.grid_blocks));
}

// Compiled to the registers the plan estimated, the same kernel launches its planned grid.
TEST_F(OccupancyGrid, AColumnTotalGridAtTheEstimatedRegistersKeepsItsPlan) {
  fuse_sinkhorn(8192, 512, 40);
  fake().set_kernel_registers(planned().name.c_str(), planned().spec.registers_estimate);
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(planned().spec.grid_blocks));
}

TEST_F(OccupancyGrid, AKernelThatDoesNotFitKeepsItsPlannedGrid) {
  fuse_layer_norm(8192, 4096, 300);  // more registers than a thread may have: 0 blocks fit
  EXPECT_EQ(run_and_get_grid(), static_cast<unsigned>(planned().spec.grid_blocks));
}

TEST_F(OccupancyGrid, GridForOccupancyRejectsBadInput) {
  fuse_layer_norm(64, 256, 34);
  uint32_t grid[3] = {7, 7, 7};
  EXPECT_EQ(fst_kernel_grid_for_occupancy(kernel_, 0, kMultiprocessors, grid), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(fst_last_error_message(), "blocks_per_multiprocessor");
  EXPECT_EQ(fst_kernel_grid_for_occupancy(kernel_, 4, 0, grid), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(fst_last_error_message(), "multiprocessors");
  EXPECT_EQ(fst_kernel_grid_for_occupancy(nullptr, 4, kMultiprocessors, grid), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fst_kernel_grid_for_occupancy(kernel_, 4, kMultiprocessors, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grid[0], 7u);
  EXPECT_EQ(grid[1], 7u);
  EXPECT_EQ(grid[2], 7u);
}

// A kernel that does nothing, as PTX for sm_80.
constexpr const char* kEmptyKernelPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry empty_kernel(
	.param .u64 empty_kernel_param_0
)
{
	ret;
}
)";

TEST_F(OccupancyGrid, ACooperativeLaunchIsCheckedWithTheOccupancyAskedAtLoad) {
  fake().set_multiprocessors(10);
  fake().set_kernel_registers("empty_kernel", 64);  // 256 threads: 4 blocks per multiprocessor
  auto driver = cuda::load_driver(fake().path());
  cuda::Device device(driver, cuda::query_device(*driver, 0));
  cuda::ContextScope scope(device);
  jit::CompiledModule module;
  module.ptx = kEmptyKernelPtx;
  auto kernel =
      cuda::LoadedKernel::load(driver, module, "empty_kernel", 90, 80, device.info().handle, 0, 256);
  ASSERT_EQ(kernel->blocks_per_multiprocessor(), std::optional<int>(4));
  EXPECT_EQ(fake().call_count("cuOccupancyMaxActiveBlocksPerMultiprocessor"), 1u);

  PlannedKernel planned;
  planned.name = "empty_kernel";
  planned.launch = LaunchKind::kCooperative;
  planned.spec.block_threads = 256;
  planned.spec.grid_blocks = 60;  // planned for 6 per multiprocessor: only 4 fit
  planned.spec.work_units = 1000;
  const cuda::LaunchConfig config =
      cuda::launch_config(planned, device.info(), kernel->blocks_per_multiprocessor());
  EXPECT_EQ(config.grid[0], 40u);  // shrunk to what is resident
  void* argument = nullptr;
  void* params[1] = {&argument};
  cuda::launch_kernel(device, *kernel, config, nullptr, params);
  ASSERT_EQ(fake().launches().size(), 1u);
  EXPECT_EQ(fake().launches()[0].cooperative, 1);
  EXPECT_EQ(fake().launches()[0].grid[0], 40u);
  EXPECT_EQ(fake().call_count("cuOccupancyMaxActiveBlocksPerMultiprocessor"), 1u);  // not asked again
  // A cooperative grid never grows past its plan.
  planned.spec.grid_blocks = 20;
  EXPECT_EQ(cuda::launch_config(planned, device.info(), 4).grid[0], 20u);
}

}  // namespace
}  // namespace fstitch::cuda_test
