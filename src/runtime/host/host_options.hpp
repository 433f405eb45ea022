// Options and limits of the host backend. Launches are shaped like cuLaunchKernel's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fstitch::host {

struct Dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

// The order in which the threads of a block run between synchronization points, and the
// blocks of a grid start. Running a kernel in both orders exposes a missing __syncthreads,
// or a result that depends on which block comes first.
enum class ThreadOrder { kForward, kReverse };

struct HostLaunchOptions {
  // Keeps every block of the grid resident at once, as a grid-wide barrier needs.
  bool cooperative = false;
  // Blocks come in clusters of this many consecutive blockIdx.x, each cluster resident at once
  // (blocks of a cluster may wait for each other); 1: no clusters. The grid's x extent must be a
  // multiple of it.
  std::uint32_t cluster_blocks = 1;
  ThreadOrder order = ThreadOrder::kForward;
  // Stack of each thread (rounded up to pages), above a guard page.
  std::size_t stack_bytes = 64 * 1024;
  // How many workers of the pool may run this launch; 0 means all of them.
  unsigned int max_workers = 0;
};

// See HostCompileOptions::unit_kernel_bytes.
inline constexpr std::size_t kDefaultUnitKernelBytes = 512 * 1024;

struct HostCompileOptions {
  // Where compiled objects are kept; empty means FSTITCH_CACHE_DIR, else
  // $XDG_CACHE_HOME/fstitch, else ~/.cache/fstitch (objects go to its "host" folder).
  std::string cache_dir;
  // False: compile in a temporary folder and keep nothing on disk.
  bool disk_cache = true;
  // Receives warnings about cache folders and entries that are not trusted or cannot be
  // written (the compile goes on without them); empty: the library's default log (stderr).
  std::function<void(const std::string& message)> warn;
  std::string optimization = "-O1";
  // Appended to the compiler's command line (and to the cache key).
  std::vector<std::string> extra_flags;
  // How long one compiler process may run before its process group is killed; nothing
  // means FSTITCH_HOST_COMPILE_TIMEOUT, else 10 minutes.
  std::optional<std::chrono::milliseconds> compile_timeout;
  // Kernel text per translation unit when a generated module (HostModuleSource) is split:
  // kernels are added to a unit until it would exceed this (docs/host-backend.md says why
  // this size). The cache key covers each unit's text, so it covers the split too.
  std::size_t unit_kernel_bytes = kDefaultUnitKernelBytes;
};

// Limits, those of CUDA where CUDA has one.
inline constexpr unsigned int kMaxThreadsPerBlock = 1024;
inline constexpr unsigned int kMaxBlockDimXY = 1024;
inline constexpr unsigned int kMaxBlockDimZ = 64;
inline constexpr unsigned int kMaxGridDimX = 2147483647u;
inline constexpr unsigned int kMaxGridDimYZ = 65535;
inline constexpr std::size_t kMaxStaticSharedBytes = 48 * 1024;
inline constexpr std::size_t kMaxSharedBytesPerBlock = 227 * 1024;  // static + dynamic
inline constexpr std::size_t kMinStackBytes = 16 * 1024;
inline constexpr std::size_t kMaxStackBytes = 64 * 1024 * 1024;
// A cooperative launch keeps every thread of the grid resident as a fiber with a stack of
// its own (a cluster launch, every thread of a cluster): this bounds their memory, a few KiB
// of each stack touched, the rest reserved only. It is above a wave of every device the
// planner targets (132 SMs x 2048 threads).
inline constexpr std::uint64_t kMaxResidentThreads = std::uint64_t{1} << 19;
// Threads whose stacks sit above guard pages at once, in all workers together: two memory
// mappings each, half the default vm.max_map_count. Resident blocks beyond it take turns on
// shared stacks, each keeping a copy of what its suspended fibers use (SharedStacks).
inline constexpr std::uint64_t kMaxGuardedThreads = 16384;

}  // namespace fstitch::host
