// What fst_fusion_run hands the driver: for every kernel, in plan order, the buffers its
// parameters name (fst_kernel_param), its launch configuration, and the caller's stream.
#include <cstdint>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class ArgumentPacking : public CudaSeamTest {
 protected:
  // Runs `fusion` with `workspace` (NULL: allocated by the run) on a stream of the stand-in
  // and checks every recorded launch against the kernel accessors.
  void run_and_check(const fst_graph* graph, const fst_fusion* fusion, void* workspace) {
    record_all_params(fake(), fusion);
    RunBuffers buffers(graph);
    void* stream = fake().new_stream();
    ASSERT_EQ(run(fusion, buffers, workspace, stream), FST_OK) << fst_last_error_message();

    uintptr_t workspace_base = reinterpret_cast<uintptr_t>(workspace);
    if (workspace == nullptr) {
      const auto allocations = fake().allocations();
      if (!allocations.empty()) workspace_base = static_cast<uintptr_t>(allocations[0].address);
    }
    size_t workspace_bytes = 0;
    ASSERT_EQ(fst_fusion_workspace_size(fusion, &workspace_bytes), FST_OK);

    const auto kernels = kernels_of(fusion);
    const auto launches = fake().launches();
    ASSERT_EQ(launches.size(), kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      SCOPED_TRACE("kernel " + kernels[i].name);
      const KernelInfo& k = kernels[i];
      const fake_cuda_launch_record& l = launches[i];
      EXPECT_EQ(l.kernel, k.name);
      EXPECT_EQ(l.cooperative, 0);
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(l.grid[d], k.grid[d]);
        EXPECT_EQ(l.block[d], k.block[d]);
      }
      EXPECT_EQ(l.shared_bytes, 0u);
      EXPECT_EQ(k.shared_bytes, 0u);
      EXPECT_EQ(l.stream, stream);
      ASSERT_EQ(static_cast<size_t>(l.param_count), k.params.size());
      for (size_t p = 0; p < k.params.size(); ++p) {
        const KernelInfo::Param& param = k.params[p];
        const void* expected = nullptr;
        switch (param.kind) {
          case FST_PARAM_INPUT:
            ASSERT_LT(param.index, buffers.inputs.size());
            expected = buffers.inputs[param.index];
            break;
          case FST_PARAM_OUTPUT:
            ASSERT_LT(param.index, buffers.outputs.size());
            expected = buffers.outputs[param.index];
            break;
          case FST_PARAM_WORKSPACE:
            ASSERT_LT(param.index, workspace_bytes);
            expected = reinterpret_cast<const void*>(workspace_base + param.index);
            break;
          case FST_PARAM_CONSTANT:
            ADD_FAILURE() << "these graphs have no tensor constants";
            break;
        }
        EXPECT_EQ(l.params[p], expected) << "parameter " << p;
      }
    }
  }
};

TEST_F(ArgumentPacking, EveryKernelGetsItsBuffersWithACallerWorkspace) {
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_NONE);
  size_t kernels = 0, workspace_bytes = 0;
  ASSERT_EQ(fst_fusion_kernel_count(fusion.get(), &kernels), FST_OK);
  ASSERT_EQ(fst_fusion_workspace_size(fusion.get(), &workspace_bytes), FST_OK);
  ASSERT_GE(kernels, 4u);  // one kernel per operation
  ASSERT_GT(workspace_bytes, 0u);
  std::vector<unsigned char> workspace(workspace_bytes);
  run_and_check(graph.get(), fusion.get(), workspace.data());
  EXPECT_EQ(fake().allocations().size(), 0u);
}

TEST_F(ArgumentPacking, EveryKernelGetsItsBuffersWithTheRunsWorkspace) {
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_NONE);
  run_and_check(graph.get(), fusion.get(), nullptr);
  EXPECT_EQ(fake().allocations().size(), 1u);
}

TEST_F(ArgumentPacking, FusionWithoutWorkspace) {
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  size_t workspace_bytes = 1;
  ASSERT_EQ(fst_fusion_workspace_size(fusion.get(), &workspace_bytes), FST_OK);
  ASSERT_EQ(workspace_bytes, 0u);
  run_and_check(graph.get(), fusion.get(), nullptr);
  EXPECT_EQ(fake().allocations().size(), 0u);
}

TEST_F(ArgumentPacking, DefaultStreamIsPassedAsNull) {
  ContextPtr context = cuda_context();
  GraphPtr graph = scale_graph(context.get(), 256);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  RunBuffers buffers(graph.get());
  ASSERT_EQ(run(fusion.get(), buffers, nullptr, nullptr), FST_OK) << fst_last_error_message();
  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].stream, nullptr);
}

}  // namespace
}  // namespace fstitch::cuda_test
