#include "runtime/kernel_args.hpp"

namespace fstitch::runtime {

void KernelArguments::pack(const PlannedKernel& kernel, const void* const* inputs, void* const* outputs,
                           uintptr_t workspace) {
  addresses_.resize(kernel.params.size());
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const KernelParam& p = kernel.params[i];
    switch (p.kind) {
      case ParamKind::kInput:
        addresses_[i] = const_cast<void*>(inputs[p.index]);
        break;
      case ParamKind::kOutput:
        addresses_[i] = outputs[p.index];
        break;
      case ParamKind::kWorkspace:
        addresses_[i] = reinterpret_cast<void*>(workspace + p.index);
        break;
    }
  }
  link();
}

void KernelArguments::assign(const void* const* addresses, size_t count) {
  addresses_.resize(count);
  for (size_t i = 0; i < count; ++i) addresses_[i] = const_cast<void*>(addresses[i]);
  link();
}

void KernelArguments::link() {
  params_.resize(addresses_.size());
  for (size_t i = 0; i < addresses_.size(); ++i) params_[i] = &addresses_[i];
}

}  // namespace fstitch::runtime
