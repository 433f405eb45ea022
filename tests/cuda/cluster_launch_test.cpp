// Rows split across a group of blocks: on sm_90 each group is a thread-block cluster
// (cuLaunchKernelEx with the cluster dimension; partials in distributed shared memory, no
// workspace to clear), elsewhere the grid is cooperative and the group's arrival counters are
// cleared on the run's stream before the launch.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class ClusterLaunch : public CudaSeamTest {
 protected:
  // LayerNorm of 2 rows of 30000: too few rows for a block each.
  const fst_kernel* split_kernel(int target_sm) {
    graph_ = layer_norm_graph(context_.get(), 2, 30000);
    fusion_ = fuse(graph_.get(), FST_POLICY_STITCH, target_sm);
    const fst_kernel* kernel = nullptr;
    EXPECT_EQ(fst_fusion_kernel(fusion_.get(), 0, &kernel), FST_OK);
    return kernel;
  }
  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
};

TEST_F(ClusterLaunch, GroupsAreClustersOnSm90) {
  context_ = cuda_context();
  const fst_kernel* kernel = split_kernel(90);
  fst_launch_kind kind = FST_LAUNCH_REGULAR;
  ASSERT_EQ(fst_kernel_launch_kind(kernel, &kind), FST_OK);
  ASSERT_EQ(kind, FST_LAUNCH_CLUSTER);
  uint32_t cluster = 0;
  ASSERT_EQ(fst_kernel_cluster_blocks(kernel, &cluster), FST_OK);
  EXPECT_GE(cluster, 2u);
  EXPECT_LE(cluster, 8u);
  uint32_t grid[3], block[3];
  size_t shared = 0;
  ASSERT_EQ(fst_kernel_launch_config(kernel, grid, block, &shared), FST_OK);
  EXPECT_EQ(grid[0] % cluster, 0u);
  size_t offset = 0, bytes = 0;
  ASSERT_EQ(fst_kernel_zeroed_workspace(kernel, &offset, &bytes), FST_OK);
  EXPECT_EQ(bytes, 0u);

  void* stream = fake().new_stream();
  fake().clear_records();
  RunBuffers buffers(graph_.get());
  ASSERT_EQ(run(fusion_.get(), buffers, nullptr, stream), FST_OK) << fst_last_error_message();
  const auto launches = fake().launches();
  const auto memsets = fake().memsets();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(memsets.size(), 0u);
  EXPECT_EQ(launches[0].cluster[0], cluster);
  EXPECT_EQ(launches[0].cluster[1], 1u);
  EXPECT_EQ(launches[0].cluster[2], 1u);
  EXPECT_EQ(launches[0].cooperative, 0);
  EXPECT_EQ(launches[0].grid[0], grid[0]);
  EXPECT_EQ(launches[0].stream, stream);
  EXPECT_NE(fake().find_call("cuLaunchKernelEx"), SIZE_MAX);
}

TEST_F(ClusterLaunch, GroupsAreACooperativeGridOnSm80) {
  fake().set_compute_capability(8, 0);
  fake().set_multiprocessors(108);
  context_ = cuda_context();
  const fst_kernel* kernel = split_kernel(80);
  fst_launch_kind kind = FST_LAUNCH_REGULAR;
  ASSERT_EQ(fst_kernel_launch_kind(kernel, &kind), FST_OK);
  ASSERT_EQ(kind, FST_LAUNCH_COOPERATIVE);
  uint32_t cluster = 0;
  ASSERT_EQ(fst_kernel_cluster_blocks(kernel, &cluster), FST_OK);
  EXPECT_EQ(cluster, 1u);
  size_t offset = 0, bytes = 0;
  ASSERT_EQ(fst_kernel_zeroed_workspace(kernel, &offset, &bytes), FST_OK);
  EXPECT_GT(bytes, 0u);
  void* stream = fake().new_stream();
  fake().clear_records();
  RunBuffers buffers(graph_.get());
  ASSERT_EQ(run(fusion_.get(), buffers, nullptr, stream), FST_OK) << fst_last_error_message();
  const auto launches = fake().launches();
  const auto memsets = fake().memsets();
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(launches[0].cooperative, 1);
  EXPECT_EQ(launches[0].cluster[0], 1u);
  EXPECT_EQ(memsets[0].stream, stream);
  EXPECT_EQ(memsets[0].bytes, bytes);
  EXPECT_LT(memsets[0].call_index, launches[0].call_index);
}

}  // namespace
}  // namespace fstitch::cuda_test
