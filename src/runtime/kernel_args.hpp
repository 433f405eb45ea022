// The arguments of one planned kernel's launch: the address behind each parameter (a graph
// input, a graph output, a workspace offset or one of the fusion's constants), and the array of pointers to
// them that cuLaunchKernel and the host backend's launch take. Shared by both runtimes.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace fstitch::runtime {

// The address of a value at `location` in a run's buffers (see KernelArguments::pack).
void* location_address(const ValueLocation& location, const void* const* inputs, void* const* outputs,
                       uintptr_t workspace, const void* const* constants);

class KernelArguments {
 public:
  // Fills the arguments of `kernel` from the run's buffers; `workspace` is the base address
  // of the workspace (host or device) or 0 when the plan has none; constants[i] is where the
  // plan's constant i is (FusionPlan::constants: host data or its device copy). Reuses its
  // storage.
  void pack(const PlannedKernel& kernel, const void* const* inputs, void* const* outputs, uintptr_t workspace,
            const void* const* constants);
  // Takes the addresses as given, one per parameter (fst_kernel_launch).
  void assign(const void* const* addresses, size_t count);

  // The address behind each parameter, in parameter order.
  const std::vector<void*>& addresses() const { return addresses_; }
  // Where the kernel's zeroed workspace (PlannedKernel::zeroed_workspace) lies among these
  // addresses: inside the workspace parameter that holds it, which a caller of
  // fst_kernel_launch may have placed anywhere. Null when the kernel needs nothing zeroed.
  void* zeroed_address(const PlannedKernel& kernel) const;
  // params()[i] points to addresses()[i], as cuLaunchKernel's kernelParams.
  void** params() { return params_.data(); }

 private:
  void link();
  std::vector<void*> addresses_;
  std::vector<void*> params_;
};

}  // namespace fstitch::runtime
