// The CUDA context a run executes in: the caller's current context when there is one
// (nothing pushed), else the device's primary context, retained once per fst_context,
// pushed for the run and popped again, and released with the context.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class Contexts : public CudaSeamTest {
 protected:
  // A context, a one-kernel fusion on it and buffers for its runs.
  struct Setup {
    ContextPtr context;
    GraphPtr graph;
    FusionPtr fusion;
    // The fusion and the graph keep the context alive: all three go.
    void release() {
      fusion.reset();
      graph.reset();
      context.reset();
    }
    fst_status run() {
      RunBuffers buffers(graph.get());
      return cuda_test::run(fusion.get(), buffers, nullptr, nullptr);
    }
  };
  Setup setup() {
    Setup s;
    s.context = cuda_context();
    s.graph = scale_graph(s.context.get(), 512);
    s.fusion = fuse(s.graph.get(), FST_POLICY_STITCH);
    return s;
  }
};

TEST_F(Contexts, WithoutACurrentContextTheRunPushesAndPopsThePrimaryContext) {
  const int retained_before = fake().primary_retain_count(0);
  Setup s = setup();
  ASSERT_EQ(s.run(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(s.run(), FST_OK) << fst_last_error_message();

  void* primary = fake().primary_context(0);
  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 2u);
  for (const auto& launch : launches) EXPECT_EQ(launch.context, primary);
  EXPECT_EQ(fake().call_count("cuCtxPushCurrent_v2"), 2u);
  EXPECT_EQ(fake().call_count("cuCtxPopCurrent_v2"), 2u);
  EXPECT_EQ(fake().current_context(), nullptr);
  EXPECT_EQ(fake().context_stack_depth(), 0);
  EXPECT_EQ(fake().call_count("cuDevicePrimaryCtxRetain"), 1u);
  EXPECT_EQ(fake().primary_retain_count(0), retained_before + 1);

  s.fusion.reset();
  s.context.reset();
  EXPECT_EQ(fake().primary_retain_count(0), retained_before + 1);  // the graph shares the context
  s.graph.reset();
  EXPECT_EQ(fake().primary_retain_count(0), retained_before);
  EXPECT_EQ(fake().call_count("cuDevicePrimaryCtxRelease_v2"), 1u);
}

TEST_F(Contexts, EachFstContextRetainsThePrimaryContextOnce) {
  Setup first = setup();
  Setup second = setup();
  ASSERT_EQ(first.run(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(second.run(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(first.run(), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fake().primary_retain_count(0), 2);
  first.release();
  EXPECT_EQ(fake().primary_retain_count(0), 1);
  second.release();
  EXPECT_EQ(fake().primary_retain_count(0), 0);
}

TEST_F(Contexts, NoRunNoRetain) {
  Setup s = setup();
  s.release();
  EXPECT_EQ(fake().call_count("cuDevicePrimaryCtxRetain"), 0u);
  EXPECT_EQ(fake().call_count("cuDevicePrimaryCtxRelease_v2"), 0u);
}

TEST_F(Contexts, TheCallersCurrentContextIsUsedAndNothingIsPushed) {
  Setup s = setup();
  void* own = fake().new_context(0);
  ASSERT_EQ(fake().cuCtxSetCurrent(static_cast<CUcontext>(own)), 0);
  ASSERT_EQ(s.run(), FST_OK) << fst_last_error_message();
  ASSERT_EQ(s.run(), FST_OK) << fst_last_error_message();

  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 2u);
  for (const auto& launch : launches) EXPECT_EQ(launch.context, own);
  EXPECT_EQ(fake().call_count("cuCtxPushCurrent_v2"), 0u);
  EXPECT_EQ(fake().call_count("cuCtxPopCurrent_v2"), 0u);
  EXPECT_EQ(fake().call_count("cuDevicePrimaryCtxRetain"), 0u);
  EXPECT_EQ(fake().current_context(), own);
  EXPECT_EQ(fake().context_stack_depth(), 1);
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);
}

TEST_F(Contexts, ACurrentContextOfAnotherDeviceIsRefused) {
  fake().set_device_count(2);
  Setup s = setup();  // device 0
  void* other = fake().new_context(1);
  ASSERT_EQ(fake().cuCtxSetCurrent(static_cast<CUcontext>(other)), 0);
  EXPECT_EQ(s.run(), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fst_last_error_message()).find("another device"), std::string::npos)
      << fst_last_error_message();
  EXPECT_TRUE(fake().launches().empty());
  EXPECT_EQ(fake().current_context(), other);
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);
}

TEST_F(Contexts, TheContextIsPoppedWhenTheRunFails) {
  Setup s = setup();
  fake().inject("cuLaunchKernel", 719, 1);  // CUDA_ERROR_LAUNCH_FAILED
  EXPECT_EQ(s.run(), FST_ERROR_LAUNCH);
  EXPECT_EQ(fake().context_stack_depth(), 0);
  EXPECT_EQ(fake().call_count("cuCtxPushCurrent_v2"), fake().call_count("cuCtxPopCurrent_v2"));
}

}  // namespace
}  // namespace fstitch::cuda_test
