// Resident blocks per SM and waves of a launch, from a kernel's registers, shared memory
// and block size and the architecture's limits, the way CUDA's occupancy calculator counts
// them. Static: the report computes what the hardware would allow without asking a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "plan/arch.hpp"

namespace fstitch::bench {

struct SmLimits {
  int sm_count = 0;
  int max_threads = 2048;
  int max_blocks = 32;
  int max_warps = 64;
  int registers = 65536;
  int register_granularity = 256;  // registers are allocated per warp in units of this many
  int max_registers_per_thread = 255;
  int64_t shared_bytes = 0;
  int64_t reserved_shared_per_block = 1024;  // CUDA keeps 1 KiB of each block's shared memory
};

// The limits of sm_80 and sm_90: SMs and shared memory per SM from `arch`, the rest the
// same for both.
SmLimits sm_limits(const ArchParams& arch);

struct Occupancy {
  int blocks_per_sm = 0;
  std::string limiter;        // "threads", "registers", "shared", "blocks"; "none fit" at 0
  double warp_occupancy = 0;  // resident warps over the SM's maximum
};

// Resident blocks per SM of a kernel with `threads` per block, `registers` per thread and
// `shared_bytes` of shared memory per block (static plus dynamic).
Occupancy occupancy(const SmLimits& limits, int threads, int registers, int64_t shared_bytes);

struct Waves {
  double waves = 0;      // grid blocks over the blocks resident on the whole GPU at once
  double last_wave = 0;  // how full the last wave is, in (0, 1]; 1 when the waves are whole
};

Waves waves(int64_t grid_blocks, int sm_count, int blocks_per_sm);

}  // namespace fstitch::bench
