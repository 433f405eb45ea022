// Launching one planned kernel on a stream: the launch configuration, the cooperative-launch
// decision (every block of a grid-barrier kernel must be resident at once), and the call.
#pragma once

#include <optional>
#include <string>

#include "plan/plan.hpp"
#include "runtime/cuda/device.hpp"
#include "runtime/cuda/kernel_image.hpp"

namespace fstitch::cuda {

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned dynamic_shared_bytes = 0;
  LaunchKind kind = LaunchKind::kRegular;
  unsigned cluster_blocks = 1;  // kCluster: blocks per cluster along x
};

// The configuration of `kernel`, checked against the device: Error(kUnsupported) for a block
// larger than the device allows or a grid beyond 2^31 - 1 blocks. The grid is the planned one
// (spec.grid_blocks) unless `blocks_per_multiprocessor`, the occupancy the driver reports for
// the compiled kernel (LoadedKernel::blocks_per_multiprocessor), is given and positive: then
// it is launch_grid() at that occupancy on the device's multiprocessors (plan/launch_grid.hpp:
// one wave or the work units, a fixed grid kept, a cooperative grid only shrunk).
LaunchConfig launch_config(const PlannedKernel& kernel, const DeviceInfo& device,
                           std::optional<int> blocks_per_multiprocessor = std::nullopt);

// Whether a cooperative grid of `config` fits when the occupancy calculator allows
// `blocks_per_multiprocessor` of its blocks on each multiprocessor. Throws Error(kUnsupported)
// when the device cannot launch cooperatively, Error(kLaunch) naming the kernel, its grid
// and the resident limit when the grid does not fit.
void require_cooperative_fit(const LaunchConfig& config, const DeviceInfo& device,
                             int blocks_per_multiprocessor, const std::string& kernel_name);

// Queues cuMemsetD8Async of `bytes` zero bytes at `address` on `stream` (a kernel's zeroed
// workspace, PlannedKernel::zeroed_workspace, before its launch). Nothing for 0 bytes.
void clear_on_stream(const Device& device, CUdeviceptr address, size_t bytes, CUstream stream);

// Launches `kernel` on `stream` in the current context: cuLaunchKernel; for a cooperative
// kernel, the occupancy check (with the occupancy queried when the kernel was loaded, else
// asked now) and cuLaunchCooperativeKernel; for a cluster kernel, cuLaunchKernelEx with the
// cluster dimension. Never synchronizes.
void launch_kernel(const Device& device, const LoadedKernel& kernel, const LaunchConfig& config,
                   CUstream stream, void** params);

}  // namespace fstitch::cuda
