// The graphs the static kernel report plans and compiles: the canonical graphs at LLM and
// ViT sizes in f32, bf16 and f16, and the column and middle-axis reductions, for sm_90; a
// smaller set for sm_80.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::bench {

struct KernelCase {
  std::string graph;  // the builder's name
  std::string shape;  // "8192x4096"
  DType dtype = DType::kF32;
  int arch = 90;
  Graph built;
};

// sm_90: every canonical graph at [8192,4096], [16384,1024], [64*197,768] and [64*197,3072]
// and both reductions at their benchmark shapes, each in f32, bf16 and f16. sm_80: the same
// graphs at [8192,4096] (the reductions at their shapes) in bf16. `quick`: layer_norm and the
// reductions in bf16 only, for a smoke run.
std::vector<KernelCase> kernel_cases(bool quick);

}  // namespace fstitch::bench
