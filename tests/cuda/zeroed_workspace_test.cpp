// A kernel whose workspace counters must start at zero (a column reduction split across
// blocks): a run clears them with cuMemsetD8Async on the run's stream, inside the workspace,
// before the kernel's launch; kernels that need nothing zeroed get no memset.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class ZeroedWorkspace : public CudaSeamTest {
 protected:
  // sum(x, axis 0) over rows x cols f32.
  GraphPtr column_sum(int64_t rows, int64_t cols) {
    fst_graph* raw = nullptr;
    EXPECT_EQ(fst_graph_create(context_.get(), &raw), FST_OK);
    GraphPtr graph(raw);
    const int64_t dims[2] = {rows, cols};
    const int64_t axis0[1] = {0};
    const fst_value x = fst_input(raw, "x", FST_F32, 2, dims);
    fst_output(raw, "r", fst_reduce(raw, FST_REDUCE_SUM, x, 1, axis0, 0));
    EXPECT_EQ(fst_graph_verify(raw), FST_OK) << fst_last_error_message();
    return graph;
  }
  ContextPtr context_;
};

TEST_F(ZeroedWorkspace, ClearedOnTheRunsStreamBeforeTheLaunch) {
  context_ = cuda_context();
  GraphPtr graph = column_sum(8192, 1024);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH, 90);
  const fst_kernel* kernel = nullptr;
  ASSERT_EQ(fst_fusion_kernel(fusion.get(), 0, &kernel), FST_OK);
  size_t offset = 0, bytes = 0;
  ASSERT_EQ(fst_kernel_zeroed_workspace(kernel, &offset, &bytes), FST_OK);
  ASSERT_GT(bytes, 0u);
  void* stream = fake().new_stream();
  fake().clear_records();
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, stream), FST_OK) << fst_last_error_message();

  const auto memsets = fake().memsets();
  const auto launches = fake().launches();
  const auto allocations = fake().allocations();
  ASSERT_EQ(memsets.size(), 1u);
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_EQ(allocations.size(), 1u);  // the workspace, in stream order
  EXPECT_EQ(memsets[0].stream, stream);
  EXPECT_EQ(launches[0].stream, stream);
  EXPECT_EQ(memsets[0].value, 0);
  EXPECT_EQ(memsets[0].bytes, bytes);
  EXPECT_EQ(memsets[0].address, allocations[0].address + offset);
  EXPECT_GT(memsets[0].call_index, allocations[0].call_index);
  EXPECT_LT(memsets[0].call_index, launches[0].call_index);
}

TEST_F(ZeroedWorkspace, NoMemsetForKernelsThatNeedNothingZeroed) {
  context_ = cuda_context();
  GraphPtr graph = layer_norm_graph(context_.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_NONE);
  fake().clear_records();
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, fake().new_stream()), FST_OK) << fst_last_error_message();
  EXPECT_GT(fake().launches().size(), 0u);
  EXPECT_EQ(fake().memsets().size(), 0u);
}

}  // namespace
}  // namespace fstitch::cuda_test
