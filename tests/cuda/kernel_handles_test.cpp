// Kernel handles for frameworks that launch the kernels themselves: the CUfunction in the
// current (or primary) context, a launch with exactly the caller's arguments, argument
// checks that launch nothing, and the launch kind.
#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class KernelHandles : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    context_ = cuda_context();
    graph_ = layer_norm_graph(context_.get(), 8, 64);
    fusion_ = fuse(graph_.get(), FST_POLICY_NONE);
    kernels_ = kernels_of(fusion_.get());
    ASSERT_GE(kernels_.size(), 2u);
    ASSERT_EQ(fst_fusion_kernel(fusion_.get(), 1, &kernel_), FST_OK);
    record_all_params(fake(), fusion_.get());
  }
  ContextPtr context_;
  GraphPtr graph_;
  FusionPtr fusion_;
  std::vector<KernelInfo> kernels_;
  const fst_kernel* kernel_ = nullptr;  // the second kernel
};

TEST_F(KernelHandles, FunctionInThePrimaryContextWhenNoneIsCurrent) {
  void* function = nullptr;
  ASSERT_EQ(fst_kernel_function(kernel_, &function), FST_OK) << fst_last_error_message();
  ASSERT_NE(function, nullptr);
  void* context = nullptr;
  char name[FAKE_CUDA_NAME_CAPACITY] = {};
  ASSERT_EQ(fake().describe_function(function, &context, name), 1) << "not a CUfunction of the driver";
  EXPECT_EQ(context, fake().primary_context(0));
  EXPECT_EQ(name, kernels_[1].name);
  EXPECT_EQ(fake().context_stack_depth(), 0);
  EXPECT_EQ(fake().launches().size(), 0u);
}

TEST_F(KernelHandles, FunctionInTheCallersCurrentContext) {
  void* own = fake().new_context(0);
  ASSERT_EQ(fake().cuCtxSetCurrent(static_cast<CUcontext>(own)), 0);
  void* function = nullptr;
  ASSERT_EQ(fst_kernel_function(kernel_, &function), FST_OK) << fst_last_error_message();
  void* context = nullptr;
  ASSERT_EQ(fake().describe_function(function, &context, nullptr), 1);
  EXPECT_EQ(context, own);
  EXPECT_EQ(fake().call_count("cuCtxPushCurrent_v2"), 0u);
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);
}

TEST_F(KernelHandles, FunctionIsUnsupportedOnTheHostBackend) {
  ContextRequest request;
  request.backend = FST_BACKEND_HOST;
  fst_context* raw = nullptr;
  ASSERT_EQ(create_context(fake().path(), request, &raw), FST_OK);
  ContextPtr host(raw);
  GraphPtr graph = scale_graph(host.get(), 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  const fst_kernel* kernel = nullptr;
  ASSERT_EQ(fst_fusion_kernel(fusion.get(), 0, &kernel), FST_OK);
  void* function = reinterpret_cast<void*>(0x77);
  EXPECT_EQ(fst_kernel_function(kernel, &function), FST_ERROR_UNSUPPORTED);
  EXPECT_EQ(function, reinterpret_cast<void*>(0x77));
  EXPECT_CONTAINS(fst_last_error_message(), "host backend");
}

TEST_F(KernelHandles, LaunchPassesExactlyTheGivenArguments) {
  const KernelInfo& k = kernels_[1];
  std::vector<std::vector<unsigned char>> buffers(k.params.size(), std::vector<unsigned char>(16));
  std::vector<void*> args;
  for (auto& b : buffers) args.push_back(b.data());
  void* stream = fake().new_stream();
  ASSERT_EQ(fst_kernel_launch(kernel_, args.data(), args.size(), stream), FST_OK) << fst_last_error_message();
  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 1u);
  const fake_cuda_launch_record& l = launches[0];
  EXPECT_EQ(l.kernel, k.name);
  EXPECT_EQ(l.stream, stream);
  EXPECT_EQ(l.cooperative, 0);
  EXPECT_EQ(l.context, fake().primary_context(0));
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(l.grid[d], k.grid[d]);
    EXPECT_EQ(l.block[d], k.block[d]);
  }
  ASSERT_EQ(static_cast<size_t>(l.param_count), args.size());
  for (size_t i = 0; i < args.size(); ++i) EXPECT_EQ(l.params[i], args[i]) << "argument " << i;
  EXPECT_EQ(fake().context_stack_depth(), 0);
  EXPECT_EQ(fake().allocations().size(), 0u);
}

TEST_F(KernelHandles, WrongArgumentsLaunchNothing) {
  const size_t n = kernels_[1].params.size();
  std::vector<unsigned char> buffer(16);
  std::vector<void*> args(n + 1, buffer.data());
  EXPECT_EQ(fst_kernel_launch(kernel_, args.data(), n + 1, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(fst_last_error_message(), "nargs");
  EXPECT_EQ(fst_kernel_launch(kernel_, args.data(), n - 1, nullptr), FST_ERROR_INVALID_ARGUMENT);
  args[n - 1] = nullptr;
  EXPECT_EQ(fst_kernel_launch(kernel_, args.data(), n, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(fst_last_error_message(), "args[" + std::to_string(n - 1) + "]");
  EXPECT_EQ(fst_kernel_launch(kernel_, nullptr, n, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fst_kernel_launch(nullptr, args.data(), n, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fake().launches().size(), 0u);
  EXPECT_EQ(fake().call_count("cuLaunchKernel"), 0u);
}

TEST_F(KernelHandles, PlannedKernelsLaunchRegularly) {
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const fst_kernel* kernel = nullptr;
    ASSERT_EQ(fst_fusion_kernel(fusion_.get(), i, &kernel), FST_OK);
    fst_launch_kind kind = FST_LAUNCH_COOPERATIVE;
    ASSERT_EQ(fst_kernel_launch_kind(kernel, &kind), FST_OK);
    EXPECT_EQ(kind, FST_LAUNCH_REGULAR) << kernels_[i].name;
  }
  EXPECT_EQ(fst_kernel_launch_kind(nullptr, nullptr), FST_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace fstitch::cuda_test
