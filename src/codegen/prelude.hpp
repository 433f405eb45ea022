// The text every generated module starts with: macros of the kernel-source contract
// (docs/generated-code.md) under NVRTC, and the helpers kernels call (f16/bf16 conversion,
// NaN-propagating min/max, integer division and saturating casts).
#pragma once

namespace fstitch {

const char* kernel_prelude();

}  // namespace fstitch
