#include "plan/arch.hpp"

#include <cmath>

namespace fstitch {
namespace {

ArchParams ampere_a100() {
  ArchParams a;
  a.sm = 80;
  a.name = "A100 SXM";
  a.sm_count = 108;
  a.dram_bandwidth = 2.039e12;  // 80 GB HBM2e
  a.memory_latency_seconds = 650e-9;
  a.clock_hz = 1.41e9;
  a.max_threads_per_sm = 2048;
  a.shared_bytes_per_sm = 164 * 1024;
  a.max_shared_bytes_per_block = 163 * 1024;
  a.l2_bytes = 40LL << 20;
  a.launch_overhead_seconds = 2.5e-6;
  a.block_barrier_seconds = 20 / 1.41e9;
  a.warp_shuffle_seconds = 30 / 1.41e9;  // SHFL about 25 cycles, then the dependent FADD
  a.grid_barrier_seconds = 2.5e-6;
  a.group_barrier_seconds = 1.5e-6;
  return a;
}

ArchParams hopper(const char* name, double bandwidth) {
  ArchParams a;
  a.sm = 90;
  a.name = name;
  a.sm_count = 132;
  a.dram_bandwidth = bandwidth;
  a.memory_latency_seconds = 700e-9;
  a.clock_hz = 1.755e9;
  a.max_threads_per_sm = 2048;
  a.shared_bytes_per_sm = 228 * 1024;
  a.max_shared_bytes_per_block = 227 * 1024;
  a.l2_bytes = 50LL << 20;
  a.launch_overhead_seconds = 2.0e-6;
  a.block_barrier_seconds = 20 / 1.755e9;
  a.warp_shuffle_seconds = 30 / 1.755e9;
  a.grid_barrier_seconds = 2.0e-6;
  a.group_barrier_seconds = 1.2e-6;
  a.cluster_barrier_seconds = 0.4e-6;
  a.max_cluster_blocks = 8;
  return a;
}

}  // namespace

std::optional<ArchParams> arch_params(int sm) {
  switch (sm) {
    case 80:
      return ampere_a100();
    case 90:
      return hopper("H100 SXM", 3.35e12);
    default:
      return std::nullopt;
  }
}

std::optional<ArchParams> arch_params_for_device(const std::string& model) {
  if (model == "a100") return ampere_a100();
  if (model == "h100") return hopper("H100 SXM", 3.35e12);
  if (model == "h200") return hopper("H200 SXM", 4.8e12);
  return std::nullopt;
}

ArchParams refine_with_device(ArchParams a, const DeviceFacts& d) {
  if (!d.name.empty()) a.name = d.name;
  if (d.sm_count > 0) a.sm_count = d.sm_count;
  if (d.memory_clock_khz > 0 && d.memory_bus_bits > 0)
    a.dram_bandwidth = 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_bits / 8.0);
  if (d.clock_khz > 0) a.clock_hz = d.clock_khz * 1e3;
  if (d.max_threads_per_sm > 0) a.max_threads_per_sm = d.max_threads_per_sm;
  if (d.max_blocks_per_sm > 0) a.max_blocks_per_sm = d.max_blocks_per_sm;
  if (d.registers_per_sm > 0) a.registers_per_sm = d.registers_per_sm;
  if (d.shared_bytes_per_sm > 0) a.shared_bytes_per_sm = d.shared_bytes_per_sm;
  if (d.max_shared_bytes_per_block > 0) a.max_shared_bytes_per_block = d.max_shared_bytes_per_block;
  if (d.l2_bytes > 0) a.l2_bytes = d.l2_bytes;
  if (d.kernel_param_bytes > 0) a.kernel_param_bytes = d.kernel_param_bytes;
  return a;
}

int kernel_param_bytes_for(int driver_version, int nvrtc_major, int nvrtc_minor) {
  const bool driver = driver_version >= 12010;
  const bool nvrtc = nvrtc_major > 12 || (nvrtc_major == 12 && nvrtc_minor >= 1);
  return driver && nvrtc ? kLargeKernelParamBytes : kClassicKernelParamBytes;
}

int target_for_device(int compute_capability) {
  return compute_capability >= 90 ? 90 : 80;
}

}  // namespace fstitch
