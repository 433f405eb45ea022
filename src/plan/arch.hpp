// Per-device parameters of the cost model and the schedules: what the hardware can hold
// (threads, registers, shared memory per SM) and how fast it moves and computes.
#pragma once

#include <optional>
#include <string>

namespace fstitch {

// Kernel parameter space: 4 KiB everywhere; 32764 bytes on sm_70 and later when both the
// driver and NVRTC are CUDA 12.1 or newer.
inline constexpr int kClassicKernelParamBytes = 4096;
inline constexpr int kLargeKernelParamBytes = 32764;
int kernel_param_bytes_for(int driver_version, int nvrtc_major, int nvrtc_minor);

struct ArchParams {
  int sm = 90;  // the code target: 10 * major + minor
  std::string name;
  int sm_count = 0;
  double dram_bandwidth = 0;  // peak bytes per second
  // Fraction of the peak a well-written copy kernel reaches (what "speed of light" means).
  double copy_efficiency = 0.9;
  // Time from a global load's issue to its data under load: bytes in flight needed to keep
  // the memory busy are dram_bandwidth x memory_latency_seconds (Little's law).
  double memory_latency_seconds = 0;
  double clock_hz = 0;               // SM clock under sustained load
  int lanes_issued_per_clock = 128;  // 4 schedulers x 32 lanes per SM
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int register_granularity = 256;  // registers are allocated per warp in these units
  int max_registers_per_thread = 255;
  int shared_bytes_per_sm = 0;
  int max_shared_bytes_per_block = 0;    // with the opt-in attribute
  int shared_reserved_per_block = 1024;  // the system's share of each block's shared memory
  long long l2_bytes = 0;
  double launch_overhead_seconds = 0;  // per kernel, host and device side together
  double block_barrier_seconds = 0;    // one __syncthreads round of a busy SM
  // One dependent step of a warp's combine: a shuffle and the operation on what it brought.
  double warp_shuffle_seconds = 0;
  double grid_barrier_seconds = 0;     // one grid-wide barrier
  // One barrier of a group of blocks through global memory: a fence, an atomic arrival on an
  // L2-resident counter and the poll that sees the last arrival (about three L2 round trips).
  double group_barrier_seconds = 0;
  // One barrier.cluster round (arrive and wait) of a thread-block cluster, in hardware.
  double cluster_barrier_seconds = 0;
  int max_cluster_blocks = 0;  // blocks of a portable thread-block cluster; 0: no clusters
  // Bytes of kernel parameters a launch takes: the classic 4 KiB, which every supported driver
  // and NVRTC take, unless the device's context knows both take more
  // (kernel_param_bytes_for).
  int kernel_param_bytes = kClassicKernelParamBytes;
};

// Parameters for a supported target (80: A100 SXM, 90: H100 SXM), nothing otherwise.
std::optional<ArchParams> arch_params(int sm);

// Parameters of a named device model ("a100", "h100", "h200"), nothing for other names.
std::optional<ArchParams> arch_params_for_device(const std::string& model);

// What a device reports about itself (CUDA device attributes), 0 where unknown.
struct DeviceFacts {
  int compute_capability = 0;
  std::string name;
  int sm_count = 0;
  double memory_clock_khz = 0;
  int memory_bus_bits = 0;
  double clock_khz = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int registers_per_sm = 0;
  int shared_bytes_per_sm = 0;
  int max_shared_bytes_per_block = 0;
  long long l2_bytes = 0;
  int kernel_param_bytes = 0;  // what its driver and NVRTC take (kernel_param_bytes_for); 0: unknown
};

// The parameters of the target `sm` refined by what the device says: its SM count, memory
// bandwidth (memory clock x bus width x 2, DDR), clock, limits and L2. Latency and overheads
// stay the architecture's.
ArchParams refine_with_device(ArchParams base, const DeviceFacts& device);

// The supported target whose code runs on a device of `compute_capability` (10 * major +
// minor, 80 or more): sm_80 for Ampere and Ada, sm_90 for Hopper and, through its PTX, newer
// GPUs.
int target_for_device(int compute_capability);

}  // namespace fstitch
