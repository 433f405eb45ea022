// The workspace of a run without a caller workspace: allocated and freed in stream order
// around the launches (or, without memory pools, allocated and freed after synchronizing
// the stream), none for a plan that needs none; and no host synchronization otherwise.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class Workspace : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    context_ = cuda_context();
    graph_ = layer_norm_graph(context_.get(), 8, 64);
    fusion_ = fuse(graph_.get(), FST_POLICY_NONE);
    ASSERT_EQ(fst_fusion_workspace_size(fusion_.get(), &workspace_bytes_), FST_OK);
    ASSERT_GT(workspace_bytes_, 0u);
    ASSERT_EQ(fst_fusion_kernel_count(fusion_.get(), &kernels_), FST_OK);
    stream_ = fake().new_stream();
  }

  fst_status run_once(void* workspace) {
    RunBuffers buffers(graph_.get());
    return run(fusion_.get(), buffers, workspace, stream_);
  }

  // Call-log positions of the first and the last launch.
  void launch_span(size_t* first, size_t* last) {
    const auto launches = fake().launches();
    ASSERT_EQ(launches.size(), kernels_);
    *first = launches.front().call_index;
    *last = launches.back().call_index;
  }

  void expect_no_synchronization() {
    EXPECT_EQ(fake().call_count("cuStreamSynchronize"), 0u);
    EXPECT_EQ(fake().call_count("cuCtxSynchronize"), 0u);
    EXPECT_EQ(fake().call_count("cuEventSynchronize"), 0u);
  }

  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
  size_t workspace_bytes_ = 0;
  size_t kernels_ = 0;
  void* stream_ = nullptr;
};

TEST_F(Workspace, AllocatedAndFreedInStreamOrderAroundTheLaunches) {
  const size_t live_before = fake().live_allocation_count();
  ASSERT_EQ(run_once(nullptr), FST_OK) << fst_last_error_message();
  const auto allocations = fake().allocations();
  ASSERT_EQ(allocations.size(), 1u);
  const fake_cuda_allocation_record& a = allocations[0];
  EXPECT_EQ(a.bytes, workspace_bytes_);
  EXPECT_EQ(a.async, 1);
  EXPECT_EQ(a.stream, stream_);
  EXPECT_EQ(a.freed, 1);
  EXPECT_EQ(a.free_async, 1);
  EXPECT_EQ(a.free_stream, stream_);
  size_t first = 0, last = 0;
  launch_span(&first, &last);
  EXPECT_LT(a.call_index, first);
  EXPECT_GT(a.free_call_index, last);
  EXPECT_EQ(fake().call_count("cuMemAlloc_v2"), 0u);
  EXPECT_EQ(fake().call_count("cuMemFree_v2"), 0u);
  EXPECT_EQ(fake().live_allocation_count(), live_before);
  expect_no_synchronization();
}

TEST_F(Workspace, WithoutMemoryPoolsAllocatesAndFreesAfterSynchronizingTheStream) {
  fake().set_memory_pools(0);
  // A context created now sees a device without memory pools.
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_NONE);
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, stream_), FST_OK) << fst_last_error_message();

  EXPECT_EQ(fake().call_count("cuMemAllocAsync"), 0u);
  EXPECT_EQ(fake().call_count("cuMemFreeAsync"), 0u);
  const auto allocations = fake().allocations();
  ASSERT_EQ(allocations.size(), 1u);
  const fake_cuda_allocation_record& a = allocations[0];
  EXPECT_EQ(a.bytes, workspace_bytes_);
  EXPECT_EQ(a.async, 0);
  EXPECT_EQ(a.freed, 1);
  EXPECT_EQ(a.free_async, 0);
  size_t first = 0, last = 0;
  launch_span(&first, &last);
  EXPECT_LT(a.call_index, first);
  // The stream is synchronized once, after the launches and before the memory is freed.
  EXPECT_EQ(fake().call_count("cuStreamSynchronize"), 1u);
  const size_t sync = fake().find_call("cuStreamSynchronize");
  EXPECT_GT(sync, last);
  EXPECT_LT(sync, a.free_call_index);
}

TEST_F(Workspace, CallerWorkspaceMeansNoAllocationAndNoSynchronization) {
  std::vector<unsigned char> workspace(workspace_bytes_);
  ASSERT_EQ(run_once(workspace.data()), FST_OK) << fst_last_error_message();
  ASSERT_EQ(run_once(workspace.data()), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fake().launches().size(), 2 * kernels_);
  EXPECT_EQ(fake().allocations().size(), 0u);
  EXPECT_EQ(fake().call_count("cuMemAllocAsync"), 0u);
  EXPECT_EQ(fake().call_count("cuMemAlloc_v2"), 0u);
  expect_no_synchronization();
}

TEST_F(Workspace, PlanWithoutWorkspaceAllocatesNothing) {
  GraphPtr graph = layer_norm_graph(context_.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  size_t bytes = 1;
  ASSERT_EQ(fst_fusion_workspace_size(fusion.get(), &bytes), FST_OK);
  ASSERT_EQ(bytes, 0u);
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, stream_), FST_OK) << fst_last_error_message();
  EXPECT_FALSE(fake().launches().empty());
  EXPECT_EQ(fake().call_count("cuMemAllocAsync"), 0u);
  EXPECT_EQ(fake().call_count("cuMemAlloc_v2"), 0u);
  expect_no_synchronization();
}

TEST_F(Workspace, AllocationFailureIsOutOfMemoryWithTheDriversWordsAndNoLaunch) {
  fake().inject("cuMemAllocAsync", 2, 1);  // CUDA_ERROR_OUT_OF_MEMORY
  ASSERT_EQ(run_once(nullptr), FST_ERROR_OUT_OF_MEMORY);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "cuMemAllocAsync");
  EXPECT_CONTAINS(message, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_CONTAINS(message, "out of memory");
  EXPECT_EQ(fake().launches().size(), 0u);
  EXPECT_EQ(fake().call_count("cuMemFreeAsync"), 0u);
  EXPECT_EQ(fake().current_context(), nullptr);

  // The failure is not remembered: the next run allocates and launches.
  fake().clear_records();
  ASSERT_EQ(run_once(nullptr), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fake().launches().size(), kernels_);
}

}  // namespace
}  // namespace fstitch::cuda_test
