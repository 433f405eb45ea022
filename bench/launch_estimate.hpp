// What fstitch's CUDA launcher does with a planned kernel once it is compiled: the grid it
// launches at the occupancy the compiled kernel has (plan/launch_grid.hpp), and the cost
// model's estimate of that launch. The static report shows these beside the planned grid.
#pragma once

#include <cstdint>

#include "plan/arch.hpp"
#include "plan/plan.hpp"

namespace fstitch::bench {

struct LaunchEstimate {
  int64_t grid = 1;        // launch_grid() at the compiled kernel's blocks per SM
  double est_seconds = 0;  // the cost model's estimate at that grid and occupancy
};

// `kernel` of a plan for `arch` over `graph`, compiled to `registers` per thread, with
// `blocks_per_sm` of its blocks resident per SM (from those registers and its shared memory).
// With blocks_per_sm 0 (not one block fits) the planned grid and estimate stay. The
// estimate's formulas are the planner's (estimate_kernel_at_occupancy): only its inputs
// change (the occupancy and the grid).
LaunchEstimate estimate_launch(const ArchParams& arch, const Graph& graph, const PlannedKernel& kernel,
                               int registers, int blocks_per_sm);

}  // namespace fstitch::bench
