// Driver failures reach the caller with the status and the driver's own words: a failed
// launch names the kernel and the driver's error, a module the driver refuses names the
// image, and neither leaves anything loaded or current behind.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class DriverErrors : public CudaSeamTest {
 protected:
  void prepare(fst_fusion_policy policy) {
    context_ = cuda_context();
    graph_ = layer_norm_graph(context_.get(), 8, 64);
    fusion_ = fuse(graph_.get(), policy);
    kernels_ = kernels_of(fusion_.get());
  }
  fst_status run_once() {
    RunBuffers buffers(graph_.get());
    return run(fusion_.get(), buffers, nullptr, nullptr);
  }
  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
  std::vector<KernelInfo> kernels_;
};

TEST_F(DriverErrors, FailedLaunchNamesTheKernelAndTheDriversError) {
  prepare(FST_POLICY_NONE);
  ASSERT_GE(kernels_.size(), 3u);
  fake().inject_after("cuLaunchKernel", 2, 719, 1);  // the third launch fails
  ASSERT_EQ(run_once(), FST_ERROR_LAUNCH);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "kernel " + kernels_[2].name + ":");
  EXPECT_CONTAINS(message, "CUDA_ERROR_LAUNCH_FAILED");
  EXPECT_CONTAINS(message, "unspecified launch failure");
  EXPECT_EQ(fake().launches().size(), 2u);        // nothing after the failed launch
  EXPECT_EQ(fake().live_allocation_count(), 0u);  // the workspace is freed all the same
}

TEST_F(DriverErrors, OutOfMemoryAtLaunchIsOutOfMemory) {
  prepare(FST_POLICY_STITCH);
  fake().inject("cuLaunchKernel", 2, 1);
  ASSERT_EQ(run_once(), FST_ERROR_OUT_OF_MEMORY);
  EXPECT_CONTAINS(fst_last_error_message(), "CUDA_ERROR_OUT_OF_MEMORY");
}

TEST_F(DriverErrors, RefusedCubinNamesTheImageKind) {
  prepare(FST_POLICY_STITCH);
  fake().inject("cuLibraryLoadData", 999, 1);  // CUDA_ERROR_UNKNOWN: no fallback to PTX
  ASSERT_EQ(run_once(), FST_ERROR_LAUNCH);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "cuLibraryLoadData");
  EXPECT_CONTAINS(message, "cubin");
  EXPECT_CONTAINS(message, kernels_[0].name);
  EXPECT_CONTAINS(message, "CUDA_ERROR_UNKNOWN (unknown error)");
  EXPECT_EQ(fake().launches().size(), 0u);
}

TEST_F(DriverErrors, RefusedPtxNamesTheImageKind) {
  fake().set_compute_capability(10, 0);  // PTX for sm_90 is loaded
  prepare(FST_POLICY_STITCH);
  fake().inject("cuLibraryLoadData", 218, 1);  // CUDA_ERROR_INVALID_PTX
  ASSERT_EQ(run_once(), FST_ERROR_LAUNCH);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "ptx");
  EXPECT_CONTAINS(message, "CUDA_ERROR_INVALID_PTX");
  EXPECT_CONTAINS(message, "a PTX JIT compilation failed");
}

TEST_F(DriverErrors, CubinAndPtxBothRefusedNamesThePtx) {
  prepare(FST_POLICY_STITCH);
  fake().inject("cuLibraryLoadData", 209, -1);  // CUDA_ERROR_NO_BINARY_FOR_GPU, always
  ASSERT_EQ(run_once(), FST_ERROR_LAUNCH);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "ptx");
  EXPECT_CONTAINS(message, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  EXPECT_EQ(fake().call_count("cuLibraryLoadData"), 2u);
}

TEST_F(DriverErrors, FailedLoadUnloadsWhatWasLoadedAndALaterRunLoadsAgain) {
  prepare(FST_POLICY_NONE);
  ASSERT_GE(kernels_.size(), 3u);
  fake().inject_after("cuLibraryLoadData", 2, 999, 1);  // the third kernel fails to load
  ASSERT_EQ(run_once(), FST_ERROR_LAUNCH);
  EXPECT_CONTAINS(fst_last_error_message(), kernels_[2].name);
  const auto partial = fake().libraries();
  ASSERT_EQ(partial.size(), 2u);
  for (const auto& library : partial) EXPECT_EQ(library.unloaded, 1);
  EXPECT_EQ(fake().launches().size(), 0u);

  fake().clear_records();
  ASSERT_EQ(run_once(), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fake().libraries().size(), kernels_.size());
  EXPECT_EQ(fake().launches().size(), kernels_.size());
}

}  // namespace
}  // namespace fstitch::cuda_test
