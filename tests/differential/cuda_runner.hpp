// Runs the differential harness's kernels on a GPU through the CUDA backend's runtime
// (FSTITCH_BACKEND=cuda): the batch text compiled by NVRTC for the device, each kernel
// loaded as the library loads it, and the host buffers (with their canary guards) copied
// to the device and back around the launches.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit/compile.hpp"
#include "plan/plan.hpp"
#include "runtime/cuda/device.hpp"
#include "runtime/cuda/kernel_image.hpp"

namespace fstitch::testing {

// A host buffer as the device sees it: `size` bytes from `begin`, the kernel's pointer at
// begin + data_offset (the bytes around it are canaries, copied along to catch stray writes).
struct GuardedSpan {
  unsigned char* begin;
  size_t size;
  size_t data_offset;
};

class CudaRunner {
 public:
  // Opens device 0 of the driver the library would load (FSTITCH_CUDA_DRIVER honoured).
  // Throws fstitch::Error when there is no driver or device.
  CudaRunner();
  ~CudaRunner();

  // The architecture plans target on this device.
  int target_sm() const;
  // Compiles each text (one per case) for the device's target, all in parallel; throws the
  // first failure.
  std::vector<std::shared_ptr<const jit::CompiledModule>> compile(
      const std::vector<std::string>& texts) const;
  // Forgets the kernels loaded for the previous batch.
  void begin_batch();
  // Launches `kernels` (compiled into `module`) in order with the spans' device copies as
  // their parameters, waits, and copies every span back. Returns what went wrong ("" when
  // every launch succeeded).
  std::string run(const jit::CompiledModule& module, const std::vector<PlannedKernel>& kernels,
                  std::vector<GuardedSpan>& inputs, std::vector<GuardedSpan>& outputs, GuardedSpan& workspace,
                  const std::vector<GuardedSpan>& constants);

 private:
  std::shared_ptr<cuda::Device> device_;
  std::unique_ptr<cuda::ContextScope> scope_;
  std::map<std::string, std::unique_ptr<cuda::LoadedKernel>> loaded_;
};

}  // namespace fstitch::testing
