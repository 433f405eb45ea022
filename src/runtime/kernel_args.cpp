#include "runtime/kernel_args.hpp"

namespace fstitch::runtime {

void* location_address(const ValueLocation& location, const void* const* inputs, void* const* outputs,
                       uintptr_t workspace, const void* const* constants) {
  switch (location.kind) {
    case ParamKind::kInput:
      return const_cast<void*>(inputs[location.index]);
    case ParamKind::kOutput:
      return outputs[location.index];
    case ParamKind::kConstant:
      return const_cast<void*>(constants[location.index]);
    case ParamKind::kWorkspace:
      break;
  }
  return reinterpret_cast<void*>(workspace + location.index);
}

void KernelArguments::pack(const PlannedKernel& kernel, const void* const* inputs, void* const* outputs,
                           uintptr_t workspace, const void* const* constants) {
  addresses_.resize(kernel.params.size());
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const KernelParam& p = kernel.params[i];
    addresses_[i] = location_address({p.kind, p.index}, inputs, outputs, workspace, constants);
  }
  link();
}

void KernelArguments::assign(const void* const* addresses, size_t count) {
  addresses_.resize(count);
  for (size_t i = 0; i < count; ++i) addresses_[i] = const_cast<void*>(addresses[i]);
  link();
}

void* KernelArguments::zeroed_address(const PlannedKernel& kernel) const {
  const WorkspaceRange& zeroed = kernel.zeroed_workspace;
  if (zeroed.bytes == 0) return nullptr;
  for (size_t i = 0; i < kernel.params.size() && i < addresses_.size(); ++i) {
    const KernelParam& p = kernel.params[i];
    if (p.kind != ParamKind::kWorkspace || !p.is_scratch()) continue;
    if (zeroed.offset >= p.index && zeroed.offset + zeroed.bytes <= p.index + p.scratch_bytes)
      return static_cast<unsigned char*>(addresses_[i]) + (zeroed.offset - p.index);
  }
  return nullptr;
}

void KernelArguments::link() {
  params_.resize(addresses_.size());
  for (size_t i = 0; i < addresses_.size(); ++i) params_[i] = &addresses_[i];
}

}  // namespace fstitch::runtime
