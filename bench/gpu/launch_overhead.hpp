// The host cost of fst_fusion_run per kernel on the real driver, against raw cuLaunchKernel
// calls of the same kernels with the same arguments: the difference is fstitch's own
// overhead per launched kernel (argument packing, launch configuration, context handling).
#pragma once

#include <cstdint>
#include <string>

#include "fstitch.h"
#include "gpu_runtime.hpp"

namespace fstitch::bench_gpu {

struct OverheadOptions {
  int64_t rows = 32;  // small, so the device keeps up with the launches
  int64_t cols = 256;
  int chain = 16;  // unary operations in the chain; policy none gives one kernel each
  int calls = 2000;
  int warmup_calls = 50;
};

struct OverheadResult {
  bool ok = false;
  std::string error;
  std::string graph;  // what was launched
  size_t kernels = 0;
  int calls = 0;
  int calls_per_sync = 0;
  double fstitch_us_per_kernel = 0;                 // fst_fusion_run with a caller-given workspace
  double fstitch_auto_workspace_us_per_kernel = 0;  // fst_fusion_run allocating the workspace itself
  double raw_us_per_kernel = 0;                     // cuLaunchKernel with prepared arguments
  double overhead_us_per_kernel = 0;                // fstitch_us_per_kernel - raw_us_per_kernel
};

// Never throws: failures land in OverheadResult::error.
OverheadResult measure_launch_overhead(GpuRuntime& runtime, fst_context* context,
                                       const OverheadOptions& options);

}  // namespace fstitch::bench_gpu
