// The CUDA backend chosen on a working driver, the architecture fusions target on it, and
// the image (CUBIN or PTX) each kernel is loaded from.
#include <string>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class BackendSelection : public CudaSeamTest {
 protected:
  // Fuses a one-kernel graph on a context of the stand-in (target_sm 0: the default) and
  // runs it once.
  fst_status fuse_and_run(int target_sm, std::string* dump) {
    ContextPtr context = cuda_context();
    GraphPtr graph = scale_graph(context.get(), 1024);
    FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH, target_sm);
    char* text = nullptr;
    EXPECT_EQ(fst_fusion_dump(fusion.get(), &text), FST_OK);
    if (text != nullptr) *dump = text;
    fst_string_free(text);
    RunBuffers buffers(graph.get());
    return run(fusion.get(), buffers, nullptr, nullptr);
  }

  // The one library the run loaded.
  fake_cuda_library_record only_library() {
    const auto libraries = fake().libraries();
    EXPECT_EQ(libraries.size(), 1u);
    return libraries.empty() ? fake_cuda_library_record{} : libraries[0];
  }
};

TEST_F(BackendSelection, AutoPicksCudaAndReportsTheArchitecture) {
  LogCapture log;
  ContextRequest request;
  request.backend = FST_BACKEND_AUTO;
  request.log = &log;
  fst_context* raw = nullptr;
  ASSERT_EQ(create_context(fake().path(), request, &raw), FST_OK) << fst_last_error_message();
  ContextPtr context(raw);
  fst_backend active = FST_BACKEND_AUTO;
  ASSERT_EQ(fst_context_active_backend(context.get(), &active), FST_OK);
  EXPECT_EQ(active, FST_BACKEND_CUDA);
  int sm = 0;
  ASSERT_EQ(fst_context_device_arch(context.get(), &sm), FST_OK);
  EXPECT_EQ(sm, 90);
  EXPECT_CONTAINS(log.text(), "chose cuda");
  EXPECT_CONTAINS(log.text(), "sm_90");
  EXPECT_CONTAINS(log.text(), "132 multiprocessors");
}

TEST_F(BackendSelection, DeviceArchitectureIsMajorTimesTenPlusMinor) {
  fake().set_compute_capability(8, 6);
  ContextPtr context = cuda_context();
  int sm = 0;
  ASSERT_EQ(fst_context_device_arch(context.get(), &sm), FST_OK);
  EXPECT_EQ(sm, 86);
}

TEST_F(BackendSelection, AdaDeviceGetsAnSm80PlanLoadedFromItsCubin) {
  fake().set_compute_capability(8, 9);
  std::string dump;
  ASSERT_EQ(fuse_and_run(0, &dump), FST_OK) << fst_last_error_message();
  EXPECT_CONTAINS(dump, "target sm_80");
  const fake_cuda_library_record library = only_library();
  EXPECT_EQ(library.is_cubin, 1);
  EXPECT_EQ(fake().launches().size(), 1u);
}

TEST_F(BackendSelection, Sm86DeviceGetsSm80PtxAndRunsTheSm80Cubin) {
  fake().set_compute_capability(8, 6);
  ContextPtr context = cuda_context();
  GraphPtr graph = scale_graph(context.get(), 1024);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  const fst_kernel* kernel = nullptr;
  ASSERT_EQ(fst_fusion_kernel(fusion.get(), 0, &kernel), FST_OK);
  const char* ptx = nullptr;
  ASSERT_EQ(fst_kernel_ptx(kernel, &ptx), FST_OK) << fst_last_error_message();
  EXPECT_CONTAINS(ptx, ".target sm_80");
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, nullptr), FST_OK) << fst_last_error_message();
  EXPECT_EQ(only_library().is_cubin, 1);  // sm_80 machine code runs on sm_86
}

TEST_F(BackendSelection, BlackwellDeviceGetsAnSm90PlanLoadedFromPtx) {
  fake().set_compute_capability(10, 0);
  std::string dump;
  ASSERT_EQ(fuse_and_run(0, &dump), FST_OK) << fst_last_error_message();
  EXPECT_CONTAINS(dump, "target sm_90");
  const fake_cuda_library_record library = only_library();
  EXPECT_EQ(library.is_cubin, 0);
  EXPECT_STREQ(library.ptx_target, "sm_90");
  EXPECT_EQ(fake().call_count("cuLibraryLoadData"), 1u);  // the CUBIN was never offered
}

TEST_F(BackendSelection, HopperDeviceLoadsItsCubin) {
  std::string dump;
  ASSERT_EQ(fuse_and_run(0, &dump), FST_OK) << fst_last_error_message();
  EXPECT_CONTAINS(dump, "target sm_90");
  EXPECT_EQ(only_library().is_cubin, 1);
}

TEST_F(BackendSelection, ExplicitOlderTargetOnHopperLoadsPtx) {
  std::string dump;
  ASSERT_EQ(fuse_and_run(80, &dump), FST_OK) << fst_last_error_message();
  EXPECT_CONTAINS(dump, "target sm_80");
  const fake_cuda_library_record library = only_library();
  EXPECT_EQ(library.is_cubin, 0);
  EXPECT_STREQ(library.ptx_target, "sm_80");
}

TEST_F(BackendSelection, TargetNewerThanTheDeviceIsUnsupported) {
  fake().set_compute_capability(8, 0);
  std::string dump;
  ASSERT_EQ(fuse_and_run(90, &dump), FST_ERROR_UNSUPPORTED);
  const std::string message = fst_last_error_message();
  EXPECT_CONTAINS(message, "older than the fusion's target");
  EXPECT_CONTAINS(message, "sm_80");
  EXPECT_CONTAINS(message, "sm_90");
  EXPECT_EQ(fake().launches().size(), 0u);
  EXPECT_EQ(fake().call_count("cuLibraryLoadData"), 0u);
}

TEST_F(BackendSelection, RejectedCubinFallsBackToPtx) {
  fake().set_reject_cubin(1);
  std::string dump;
  ASSERT_EQ(fuse_and_run(0, &dump), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fake().call_count("cuLibraryLoadData"), 2u);  // the CUBIN, refused, then the PTX
  const fake_cuda_library_record library = only_library();
  EXPECT_EQ(library.is_cubin, 0);
  EXPECT_STREQ(library.ptx_target, "sm_90");
  EXPECT_EQ(fake().launches().size(), 1u);
}

TEST_F(BackendSelection, KernelsAreAskedForByTheirNames) {
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_NONE);
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, nullptr), FST_OK) << fst_last_error_message();
  const auto kernels = kernels_of(fusion.get());
  const auto libraries = fake().libraries();
  ASSERT_EQ(libraries.size(), kernels.size());  // one library per kernel
  for (size_t i = 0; i < kernels.size(); ++i) {
    ASSERT_EQ(libraries[i].asked_count, 1);
    EXPECT_EQ(libraries[i].asked[0], kernels[i].name);
  }
  fusion.reset();
  for (const fake_cuda_library_record& library : fake().libraries()) EXPECT_EQ(library.unloaded, 1);
}

}  // namespace
}  // namespace fstitch::cuda_test
