#include "occupancy.hpp"

#include <algorithm>
#include <cmath>

namespace fstitch::bench {
namespace {

int64_t round_up(int64_t value, int64_t unit) {
  return (value + unit - 1) / unit * unit;
}

}  // namespace

SmLimits sm_limits(const ArchParams& arch) {
  SmLimits limits;
  limits.sm_count = arch.sm_count;
  limits.max_threads = arch.max_threads_per_sm;
  limits.max_warps = arch.max_threads_per_sm / 32;
  limits.registers = arch.registers_per_sm;
  limits.shared_bytes = arch.shared_bytes_per_sm;
  return limits;
}

Occupancy occupancy(const SmLimits& limits, int threads, int registers, int64_t shared_bytes) {
  Occupancy result;
  if (threads <= 0 || registers > limits.max_registers_per_thread) {
    result.limiter = "none fit";
    return result;
  }
  const int warps = (threads + 31) / 32;
  int blocks = limits.max_blocks;
  result.limiter = "blocks";
  auto limit = [&](int64_t candidate, const char* name) {
    if (candidate < blocks) {
      blocks = static_cast<int>(std::max<int64_t>(candidate, 0));
      result.limiter = name;
    }
  };
  limit(limits.max_warps / warps, "threads");
  if (registers > 0) {
    const int64_t per_warp = round_up(int64_t{registers} * 32, limits.register_granularity);
    limit(limits.registers / per_warp / warps, "registers");
  }
  const int64_t shared_per_block = shared_bytes + limits.reserved_shared_per_block;
  limit(limits.shared_bytes / shared_per_block, "shared");
  result.blocks_per_sm = blocks;
  if (blocks == 0) result.limiter = "none fit (" + result.limiter + ")";
  result.warp_occupancy = static_cast<double>(blocks * warps) / limits.max_warps;
  return result;
}

Waves waves(int64_t grid_blocks, int sm_count, int blocks_per_sm) {
  Waves result;
  const int64_t resident = int64_t{sm_count} * blocks_per_sm;
  if (resident <= 0 || grid_blocks <= 0) return result;
  result.waves = static_cast<double>(grid_blocks) / static_cast<double>(resident);
  const int64_t last = grid_blocks % resident;
  result.last_wave = last == 0 ? 1.0 : static_cast<double>(last) / static_cast<double>(resident);
  return result;
}

}  // namespace fstitch::bench
