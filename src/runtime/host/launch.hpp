// Validates a launch and runs its blocks on the worker pool.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/host/block_executor.hpp"
#include "runtime/host/host_options.hpp"

namespace fstitch::host {

// Checks the configuration against the limits in host_options.hpp and builds the launch
// description. Throws Error(kInvalidArgument), or Error(kLaunch) for a cooperative grid too
// large to keep resident.
KernelLaunch make_kernel_launch(const std::string& kernel_name, KernelEntry entry, Dim3 grid, Dim3 block,
                                std::size_t dynamic_shared_bytes, void** params,
                                const HostLaunchOptions& options);

// Runs every block and returns when all finished. Throws Error(kLaunch) naming the block
// and thread when a block cannot finish (a barrier that can never complete, an invalid
// warp operation, too much shared memory, __trap), Error(kOutOfMemory) when stacks or
// shared memory cannot be had.
void execute_launch(const KernelLaunch& launch, const HostLaunchOptions& options);

}  // namespace fstitch::host
