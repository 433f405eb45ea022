// Runs with opaque operations on the CUDA backend (the stand-in driver): the callback comes
// between the launches in step order, gets the run's stream and device addresses at the
// plan's locations, and the kernels around it write and read those same addresses.
#include <string>
#include <vector>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class OpaqueSteps : public CudaSeamTest {};

struct SeenCall {
  size_t launches_before = 0;
  void* stream = nullptr;
  std::vector<const void*> operands;
  void* result = nullptr;
};

struct CallbackState {
  FakeCuda* fake = nullptr;
  std::vector<SeenCall> calls;
  fst_status answer = FST_OK;
};

fst_status record_call(const fst_opaque_call* call, void* user_data) {
  auto* state = static_cast<CallbackState*>(user_data);
  SeenCall seen;
  seen.launches_before = state->fake->launches().size();
  if (fst_opaque_call_stream(call, &seen.stream) != FST_OK) return FST_ERROR_INTERNAL;
  size_t count = 0;
  if (fst_opaque_call_operand_count(call, &count) != FST_OK) return FST_ERROR_INTERNAL;
  for (size_t i = 0; i < count; ++i) {
    const void* data = nullptr;
    fst_dtype dtype;
    size_t rank;
    const int64_t* dims;
    if (fst_opaque_call_operand(call, i, &data, &dtype, &rank, &dims) != FST_OK) return FST_ERROR_INTERNAL;
    seen.operands.push_back(data);
  }
  fst_dtype dtype;
  size_t rank;
  const int64_t* dims;
  if (fst_opaque_call_result(call, &seen.result, &dtype, &rank, &dims) != FST_OK) return FST_ERROR_INTERNAL;
  state->calls.push_back(seen);
  return state->answer;
}

GraphPtr parse(fst_context* context, const std::string& text) {
  fst_graph* g = nullptr;
  EXPECT_EQ(fst_graph_parse(context, text.c_str(), text.size(), &g), FST_OK) << fst_last_error_message();
  return GraphPtr(g);
}

// z = exp(x) * mm(reshape(x * 2)); w = mm2(mm) is an output.
const char* const kGraph = R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = exp %0 : f32[4,8]
%2 = constant 2 : f32
%3 = broadcast %2 : f32[4,8]
%4 = mul %0, %3 : f32[4,8]
%5 = reshape %4 : f32[8,4]
%6 = opaque "mm" (%5) : f32[4,8]
%7 = mul %1, %6 : f32[4,8]
%8 = opaque "mm2" (%6, %0) : f32[4,8]
output "z" = %7
output "w" = %8
)";

const void* address(const RunBuffers& buffers, unsigned char* workspace, fst_param_kind kind, size_t index) {
  if (kind == FST_PARAM_INPUT) return buffers.inputs[index];
  if (kind == FST_PARAM_OUTPUT) return buffers.outputs[index];
  return workspace + index;
}

TEST_F(OpaqueSteps, CallbacksComeBetweenLaunchesWithThePlansAddresses) {
  ContextPtr context = cuda_context();
  GraphPtr graph = parse(context.get(), kGraph);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  record_all_params(fake(), fusion.get());
  RunBuffers buffers(graph.get());
  size_t workspace_bytes = 0;
  ASSERT_EQ(fst_fusion_workspace_size(fusion.get(), &workspace_bytes), FST_OK);
  std::vector<unsigned char> workspace(workspace_bytes);
  void* stream = fake().new_stream();
  fake().clear_records();
  CallbackState state;
  state.fake = &fake();
  ASSERT_EQ(fst_fusion_run_with_opaque(fusion.get(), buffers.inputs.data(), buffers.inputs.size(),
                                       buffers.outputs.data(), buffers.outputs.size(), workspace.data(),
                                       stream, record_call, &state),
            FST_OK)
      << fst_last_error_message();

  const std::vector<fake_cuda_launch_record> launches = fake().launches();
  const std::vector<KernelInfo> kernels = kernels_of(fusion.get());
  size_t steps = 0, kernel_steps = 0, opaque_steps = 0;
  ASSERT_EQ(fst_fusion_step_count(fusion.get(), &steps), FST_OK);
  ASSERT_EQ(launches.size(), kernels.size());
  for (size_t s = 0; s < steps; ++s) {
    fst_step_kind kind;
    size_t index = 0;
    ASSERT_EQ(fst_fusion_step(fusion.get(), s, &kind, &index), FST_OK);
    if (kind == FST_STEP_KERNEL) {
      // Launches in step order, on the run's stream, with the plan's addresses.
      const fake_cuda_launch_record& launch = launches[kernel_steps++];
      EXPECT_EQ(std::string(launch.kernel), kernels[index].name);
      EXPECT_EQ(launch.stream, stream);
      ASSERT_EQ(static_cast<size_t>(launch.param_count), kernels[index].params.size());
      for (size_t p = 0; p < kernels[index].params.size(); ++p) {
        const KernelInfo::Param& param = kernels[index].params[p];
        EXPECT_EQ(launch.params[p], address(buffers, workspace.data(), param.kind, param.index));
      }
      continue;
    }
    ASSERT_LT(opaque_steps, state.calls.size());
    const SeenCall& call = state.calls[opaque_steps++];
    EXPECT_EQ(call.launches_before, kernel_steps) << "opaque step " << s << " ran at the wrong time";
    EXPECT_EQ(call.stream, stream);
    size_t operands = 0;
    const char* name = nullptr;
    ASSERT_EQ(fst_fusion_opaque(fusion.get(), index, &name, &operands, nullptr), FST_OK);
    ASSERT_EQ(call.operands.size(), operands);
    fst_param_kind at_kind;
    size_t at, rank;
    fst_dtype dtype;
    const int64_t* dims;
    for (size_t o = 0; o < operands; ++o) {
      ASSERT_EQ(fst_fusion_opaque_operand(fusion.get(), index, o, &at_kind, &at, &dtype, &rank, &dims),
                FST_OK);
      EXPECT_EQ(call.operands[o], address(buffers, workspace.data(), at_kind, at));
    }
    ASSERT_EQ(fst_fusion_opaque_result(fusion.get(), index, &at_kind, &at, &dtype, &rank, &dims), FST_OK);
    EXPECT_EQ(call.result, address(buffers, workspace.data(), at_kind, at));
  }
  EXPECT_EQ(kernel_steps, launches.size());
  EXPECT_EQ(opaque_steps, 2u);
  EXPECT_EQ(state.calls.size(), 2u);
}

// A failing callback stops the run: no later launch is queued, and the status comes back.
TEST_F(OpaqueSteps, AFailingCallbackStopsTheRun) {
  ContextPtr context = cuda_context();
  GraphPtr graph = parse(context.get(), kGraph);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  RunBuffers buffers(graph.get());
  fake().clear_records();
  CallbackState state;
  state.fake = &fake();
  state.answer = FST_ERROR_LAUNCH;
  EXPECT_EQ(fst_fusion_run_with_opaque(fusion.get(), buffers.inputs.data(), buffers.inputs.size(),
                                       buffers.outputs.data(), buffers.outputs.size(), nullptr, nullptr,
                                       record_call, &state),
            FST_ERROR_LAUNCH);
  EXPECT_CONTAINS(fst_last_error_message(), "\"mm\"");
  ASSERT_EQ(state.calls.size(), 1u);
  EXPECT_EQ(fake().launches().size(), state.calls[0].launches_before);
  // The workspace fstitch allocated for the run is freed even so.
  EXPECT_EQ(fake().live_allocation_count(), 0u);
}

}  // namespace
}  // namespace fstitch::cuda_test
