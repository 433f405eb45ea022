// Two pure pieces of the CUDA backend: which image of a kernel runs on which device, and
// the argument array built from a kernel's parameters.
#include <cstdint>

#include "cuda/cuda_test_support.hpp"
#include "runtime/cuda/kernel_image.hpp"
#include "runtime/kernel_args.hpp"
#include "support/error.hpp"

namespace fstitch::cuda_test {
namespace {

using cuda::ImageKind;

TEST(ChooseImage, CubinOnTheSameMajorVersionPtxOnNewerOnes) {
  struct Case {
    int device;
    int target;
    ImageKind expected;
  };
  const Case cases[] = {
      {80, 80, ImageKind::kCubin}, {86, 80, ImageKind::kCubin}, {89, 80, ImageKind::kCubin},
      {90, 90, ImageKind::kCubin}, {100, 90, ImageKind::kPtx},  {120, 90, ImageKind::kPtx},
      {90, 80, ImageKind::kPtx},   {100, 80, ImageKind::kPtx},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(cuda::choose_image(c.device, c.target), c.expected)
        << "sm_" << c.target << " on sm_" << c.device;
  }
}

TEST(ChooseImage, DeviceOlderThanTheTargetIsUnsupported) {
  for (int device : {80, 86, 89}) {
    try {
      cuda::choose_image(device, 90);
      ADD_FAILURE() << "sm_90 code accepted on sm_" << device;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kUnsupported);
      EXPECT_CONTAINS(e.what(), "sm_" + std::to_string(device));
      EXPECT_CONTAINS(e.what(), "older than the fusion's target sm_90");
    }
  }
}

PlannedKernel kernel_with(std::vector<KernelParam> params) {
  PlannedKernel k;
  k.name = "fst_k3";
  k.params = std::move(params);
  return k;
}

TEST(KernelArguments, PackPointsEachParameterAtItsBuffer) {
  int in0 = 0, in1 = 0, out0 = 0, out1 = 0, c0 = 0, c1 = 0;
  const void* inputs[2] = {&in0, &in1};
  void* outputs[2] = {&out0, &out1};
  const void* constants[2] = {&c0, &c1};
  const uintptr_t workspace = 0x7f0000100000;
  const PlannedKernel k = kernel_with({{ParamKind::kInput, 1, 4, false},
                                       {ParamKind::kConstant, 1, 5, false},
                                       {ParamKind::kWorkspace, 256, 9, false},
                                       {ParamKind::kInput, 0, 2, false},
                                       {ParamKind::kOutput, 1, 12, true},
                                       {ParamKind::kWorkspace, 0, 10, true}});
  runtime::KernelArguments args;
  args.pack(k, inputs, outputs, workspace, constants);
  const std::vector<void*> expected = {&in1, &c1,   reinterpret_cast<void*>(workspace + 256),
                                       &in0, &out1, reinterpret_cast<void*>(workspace)};
  ASSERT_EQ(args.addresses(), expected);
  for (size_t i = 0; i < expected.size(); ++i) {
    // kernelParams[i] points at the i-th pointer value.
    EXPECT_EQ(*static_cast<void**>(args.params()[i]), expected[i]) << "parameter " << i;
  }

  // Reused for a kernel with fewer parameters: nothing of the first is left.
  args.pack(kernel_with({{ParamKind::kOutput, 0, 3, true}}), inputs, outputs, workspace, constants);
  ASSERT_EQ(args.addresses().size(), 1u);
  EXPECT_EQ(*static_cast<void**>(args.params()[0]), static_cast<void*>(&out0));
}

TEST(KernelArguments, AssignTakesTheAddressesAsGiven) {
  int a = 0, b = 0;
  const void* given[2] = {&b, &a};
  runtime::KernelArguments args;
  args.assign(given, 2);
  ASSERT_EQ(args.addresses().size(), 2u);
  EXPECT_EQ(*static_cast<void**>(args.params()[0]), static_cast<void*>(&b));
  EXPECT_EQ(*static_cast<void**>(args.params()[1]), static_cast<void*>(&a));
}

}  // namespace
}  // namespace fstitch::cuda_test
