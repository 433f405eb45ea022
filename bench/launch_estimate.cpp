#include "launch_estimate.hpp"

#include "plan/cost_model.hpp"
#include "plan/launch_grid.hpp"
#include "plan/packing.hpp"

namespace fstitch::bench {

LaunchEstimate estimate_launch(const ArchParams& arch, const Graph& graph, const PlannedKernel& kernel,
                               int registers, int blocks_per_sm) {
  LaunchEstimate launch;
  launch.grid = kernel.spec.grid_blocks;
  launch.est_seconds = kernel.spec.est_seconds;
  if (blocks_per_sm <= 0 || registers <= 0) return launch;
  if (kernel.packed()) {  // a fixed grid of block ranges, one per part
    std::vector<KernelSpec> parts;
    for (const KernelPart& part : kernel.parts) {
      parts.push_back(part.spec);
      parts.back().registers_estimate = registers;
    }
    launch.est_seconds = packed_seconds_at_occupancy(arch, graph, parts, blocks_per_sm);
    return launch;
  }
  // At the launch grid with its own traffic (a column total's partials grow with the grid).
  KernelSpec launched =
      launched_at_grid(graph, kernel.spec, launch_grid(kernel, blocks_per_sm, arch.sm_count));
  launched.registers_estimate = registers;
  launch.grid = launched.grid_blocks;
  launch.est_seconds = estimate_kernel_at_occupancy(arch, graph, launched, blocks_per_sm).total_seconds;
  return launch;
}

}  // namespace fstitch::bench
