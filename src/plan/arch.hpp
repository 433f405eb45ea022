// Per-architecture parameters used by the cost model and the schedules.
#pragma once

#include <optional>

namespace fstitch {

struct ArchParams {
  int sm = 90;  // 10 * major + minor
  const char* name = "";
  int sm_count = 0;
  double dram_bandwidth = 0;  // bytes per second
  int max_threads_per_sm = 2048;
  int registers_per_sm = 65536;
  int shared_bytes_per_sm = 0;
  int max_shared_bytes_per_block = 0;
  double launch_overhead_seconds = 0;  // per kernel, host and device side together
  double flops_per_second = 0;         // f32 FMA-ish throughput used for compute estimates
};

// Parameters for a supported architecture (80: A100, 90: H100/H200), nothing otherwise.
std::optional<ArchParams> arch_params(int sm);

// The supported target whose code runs on a device of `compute_capability` (10 * major +
// minor, 80 or more): sm_80 for Ampere and Ada, sm_90 for Hopper and, through its PTX, newer
// GPUs.
int target_for_device(int compute_capability);

}  // namespace fstitch
