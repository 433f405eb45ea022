#include "plan/arch.hpp"

namespace fstitch {

std::optional<ArchParams> arch_params(int sm) {
  ArchParams a;
  a.sm = sm;
  switch (sm) {
    case 80:  // A100 SXM 80 GB
      a.name = "sm_80 (A100)";
      a.sm_count = 108;
      a.dram_bandwidth = 2.0e12;
      a.shared_bytes_per_sm = 164 * 1024;
      a.max_shared_bytes_per_block = 163 * 1024;
      a.launch_overhead_seconds = 2.5e-6;
      a.flops_per_second = 19.5e12;
      return a;
    case 90:  // H100 SXM / H200
      a.name = "sm_90 (H100/H200)";
      a.sm_count = 132;
      a.dram_bandwidth = 3.35e12;
      a.shared_bytes_per_sm = 228 * 1024;
      a.max_shared_bytes_per_block = 227 * 1024;
      a.launch_overhead_seconds = 2.0e-6;
      a.flops_per_second = 60e12;
      return a;
    default:
      return std::nullopt;
  }
}

int target_for_device(int compute_capability) {
  return compute_capability >= 90 ? 90 : 80;
}

}  // namespace fstitch
