// Tensor constants on the CUDA backend, against the stand-in driver: a fusion uploads its
// constants once per CUDA context on the first run there, passes the device copies to the
// kernels that read them, frees every copy when it is destroyed, and reports a failed upload
// without launching anything (the next run tries again).
#include <cstring>
#include <vector>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

constexpr int64_t kElements = 64;

class DeviceConstants : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    context_ = cuda_context();
    fst_graph* g = nullptr;
    ASSERT_EQ(fst_graph_create(context_.get(), &g), FST_OK);
    graph_.reset(g);
    for (int64_t k = 0; k < kElements; ++k) table_.push_back(0.5f * static_cast<float>(k));
    fst_value x = fst_input(g, "x", FST_F32, 1, &kElements);
    fst_value c =
        fst_constant_tensor(g, FST_F32, 1, &kElements, table_.data(), table_.size() * sizeof(float));
    ASSERT_EQ(fst_output(g, "y", fst_binary(g, FST_BINARY_MUL, x, c)), FST_OK);
    fusion_ = fuse(g, FST_POLICY_STITCH);
    ASSERT_TRUE(fusion_);
    record_all_params(fake(), fusion_.get());
    const std::vector<KernelInfo> kernels = kernels_of(fusion_.get());
    ASSERT_EQ(kernels.size(), 1u);
    for (size_t p = 0; p < kernels[0].params.size(); ++p) {
      if (kernels[0].params[p].kind == FST_PARAM_CONSTANT) constant_param_ = p;
    }
    ASSERT_LT(constant_param_, kernels[0].params.size());
    stream_ = fake().new_stream();
  }

  fst_status run_once() {
    RunBuffers buffers(graph_.get());
    return run(fusion_.get(), buffers, nullptr, stream_);
  }

  // The synchronous allocations (cuMemAlloc_v2): the constants' copies.
  std::vector<fake_cuda_allocation_record> uploads() {
    std::vector<fake_cuda_allocation_record> out;
    for (const auto& a : fake().allocations()) {
      if (a.async == 0) out.push_back(a);
    }
    return out;
  }

  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
  std::vector<float> table_;
  size_t constant_param_ = SIZE_MAX;
  void* stream_ = nullptr;
};

TEST_F(DeviceConstants, UploadedOncePerContextPassedToKernelsAndFreedWithTheFusion) {
  const size_t live_before = fake().live_allocation_count();
  ASSERT_EQ(run_once(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(run_once(), FST_OK) << fst_last_error_message();
  std::vector<fake_cuda_allocation_record> copies = uploads();
  ASSERT_EQ(copies.size(), 1u);  // the second run in the same context reuses the copy
  EXPECT_EQ(copies[0].bytes, table_.size() * sizeof(float));
  EXPECT_EQ(copies[0].freed, 0);
  // The stand-in's device memory is host memory: the copy holds the table.
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(copies[0].address), table_.data(), copies[0].bytes), 0);
  auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 2u);
  for (const auto& l : launches) {
    EXPECT_EQ(l.params[constant_param_], reinterpret_cast<void*>(copies[0].address));
  }

  // Another context gets its own copy.
  void* own = fake().new_context(0);
  ASSERT_EQ(fake().cuCtxSetCurrent(static_cast<CUcontext>(own)), 0);
  ASSERT_EQ(run_once(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);
  copies = uploads();
  ASSERT_EQ(copies.size(), 2u);
  launches = fake().launches();
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[2].context, own);
  EXPECT_EQ(launches[2].params[constant_param_], reinterpret_cast<void*>(copies[1].address));

  fusion_.reset();
  for (const auto& a : uploads()) EXPECT_EQ(a.freed, 1);
  EXPECT_EQ(fake().live_allocation_count(), live_before);
}

TEST_F(DeviceConstants, AFailedUploadLaunchesNothingAndTheNextRunUploadsAgain) {
  fake().inject("cuMemcpyHtoD_v2", fstitch::cuda::kErrorOutOfMemory, 1);
  EXPECT_EQ(run_once(), FST_ERROR_OUT_OF_MEMORY);
  EXPECT_CONTAINS(fst_last_error_message(), "cuMemcpyHtoD");
  EXPECT_EQ(fake().launches().size(), 0u);
  ASSERT_EQ(uploads().size(), 1u);
  EXPECT_EQ(uploads()[0].freed, 1);  // nothing of the failed upload is kept
  ASSERT_EQ(run_once(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(uploads().size(), 2u);
  EXPECT_EQ(fake().launches().size(), 1u);
}

}  // namespace
}  // namespace fstitch::cuda_test
