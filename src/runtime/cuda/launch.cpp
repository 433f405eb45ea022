#include "runtime/cuda/launch.hpp"

#include <limits>

#include "plan/launch_grid.hpp"
#include "support/error.hpp"

namespace fstitch::cuda {

LaunchConfig launch_config(const PlannedKernel& kernel, const DeviceInfo& device,
                           std::optional<int> blocks_per_multiprocessor) {
  const KernelSpec& s = kernel.spec;
  if (s.block_threads < 1 || s.block_threads > device.max_threads_per_block) {
    fail(StatusCode::kUnsupported, "kernel " + kernel.name + " needs blocks of " +
                                       std::to_string(s.block_threads) + " threads; the device allows " +
                                       std::to_string(device.max_threads_per_block));
  }
  // Sized from the compiled kernel's occupancy when it is known; at 0 (not one block fits)
  // the planned grid stays and the driver reports why the launch cannot run.
  const bool sized =
      blocks_per_multiprocessor && *blocks_per_multiprocessor > 0 && device.multiprocessors > 0;
  const int64_t grid =
      sized ? launch_grid(kernel, *blocks_per_multiprocessor, device.multiprocessors) : s.grid_blocks;
  if (grid < 1 || grid > std::numeric_limits<int32_t>::max()) {
    fail(StatusCode::kUnsupported, "kernel " + kernel.name + " needs a grid of " + std::to_string(grid) +
                                       " blocks; CUDA allows 1 .. 2147483647");
  }
  LaunchConfig config;
  config.grid[0] = static_cast<unsigned>(grid);
  config.block[0] = static_cast<unsigned>(s.block_threads);
  config.kind = kernel.launch;
  config.dynamic_shared_bytes = static_cast<unsigned>(s.dynamic_shared_bytes);
  if (kernel.launch == LaunchKind::kCluster) {
    config.cluster_blocks = static_cast<unsigned>(s.split.blocks);
    if (device.compute_capability() < 90) {
      fail(StatusCode::kUnsupported, "kernel " + kernel.name + " needs thread-block clusters of " +
                                         std::to_string(config.cluster_blocks) + " blocks (sm_90 and later); device " +
                                         std::to_string(device.ordinal) + " (" + device.name + ") is sm_" +
                                         std::to_string(device.compute_capability()));
    }
    if (config.cluster_blocks < 1 || config.grid[0] % config.cluster_blocks != 0) {
      fail(StatusCode::kInternal, "kernel " + kernel.name + ": a grid of " + std::to_string(config.grid[0]) +
                                      " blocks is not made of clusters of " + std::to_string(config.cluster_blocks));
    }
  }
  return config;
}

void require_cooperative_fit(const LaunchConfig& config, const DeviceInfo& device,
                             int blocks_per_multiprocessor, const std::string& kernel_name) {
  if (!device.cooperative_launch) {
    fail(StatusCode::kUnsupported,
         "kernel " + kernel_name + " needs a cooperative launch (grid barrier); device " +
             std::to_string(device.ordinal) + " (" + device.name + ") does not support cooperative launches");
  }
  const long long grid = 1LL * config.grid[0] * config.grid[1] * config.grid[2];
  const long long resident = 1LL * blocks_per_multiprocessor * device.multiprocessors;
  if (grid > resident) {
    fail(StatusCode::kLaunch, "kernel " + kernel_name + " needs all " + std::to_string(grid) +
                                  " blocks resident for its grid barrier, but the device holds at most " +
                                  std::to_string(resident) + " (" +
                                  std::to_string(blocks_per_multiprocessor) + " per multiprocessor x " +
                                  std::to_string(device.multiprocessors) + ")");
  }
}

void clear_on_stream(const Device& device, CUdeviceptr address, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  device.driver().check(device.api().cuMemsetD8Async(address, 0, bytes, stream), "cuMemsetD8Async");
}

void launch_kernel(const Device& device, const LoadedKernel& kernel, const LaunchConfig& config,
                   CUstream stream, void** params) {
  const DriverApi& api = device.api();
  // Since CUDA 12.0 the launch calls take a CUkernel in place of a CUfunction and run it in
  // the current context.
  auto* function = reinterpret_cast<CUfunction>(kernel.kernel());
  if (config.kind == LaunchKind::kCooperative) {
    int per_multiprocessor = kernel.blocks_per_multiprocessor().value_or(0);
    if (!kernel.blocks_per_multiprocessor()) {
      const int block = static_cast<int>(config.block[0] * config.block[1] * config.block[2]);
      device.driver().check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                                &per_multiprocessor, kernel.function(), block, config.dynamic_shared_bytes),
                            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    }
    require_cooperative_fit(config, device.info(), per_multiprocessor, kernel.name());
    device.driver().check(api.cuLaunchCooperativeKernel(
                              function, config.grid[0], config.grid[1], config.grid[2], config.block[0],
                              config.block[1], config.block[2], config.dynamic_shared_bytes, stream, params),
                          "cuLaunchCooperativeKernel");
    return;
  }
  if (config.kind == LaunchKind::kCluster) {
    CUlaunchAttribute cluster;
    cluster.id = kLaunchAttrClusterDimension;
    cluster.value.cluster_dim = {config.cluster_blocks, 1, 1};
    CUlaunchConfig ex;
    ex.grid_x = config.grid[0];
    ex.grid_y = config.grid[1];
    ex.grid_z = config.grid[2];
    ex.block_x = config.block[0];
    ex.block_y = config.block[1];
    ex.block_z = config.block[2];
    ex.shared_bytes = config.dynamic_shared_bytes;
    ex.stream = stream;
    ex.attrs = &cluster;
    ex.attr_count = 1;
    const CUresult result = api.cuLaunchKernelEx(&ex, function, params, nullptr);
    if (result != kSuccess) {
      fail(result == kErrorOutOfMemory ? StatusCode::kOutOfMemory : StatusCode::kLaunch,
           "cuLaunchKernelEx (clusters of " + std::to_string(config.cluster_blocks) + " blocks) failed for kernel " +
               kernel.name() + ": " + device.driver().describe(result));
    }
    return;
  }
  const CUresult result = api.cuLaunchKernel(function, config.grid[0], config.grid[1], config.grid[2],
                                             config.block[0], config.block[1], config.block[2],
                                             config.dynamic_shared_bytes, stream, params, nullptr);
  if (result != kSuccess) {
    fail(result == kErrorOutOfMemory ? StatusCode::kOutOfMemory : StatusCode::kLaunch,
         "cuLaunchKernel failed for kernel " + kernel.name() + ": " + device.driver().describe(result));
  }
}

}  // namespace fstitch::cuda
