// The grid a kernel launches with, from an occupancy: one rule for the planner (with the
// estimated occupancy), the CUDA launcher (with the occupancy the driver reports for the
// compiled kernel), fst_kernel_grid_for_occupancy and the kernel report, so all of them agree.
#pragma once

#include <cstdint>

#include "plan/kernel_spec.hpp"
#include "plan/plan.hpp"

namespace fstitch {

// The grid `spec` launches with when `blocks_per_sm` of its blocks are resident on each of
// `sms` multiprocessors. For GridPolicy::kStrided, with M = spec.grid_multiple:
//
//   clamp(round_down(blocks_per_sm x sms, M), M, round_up(spec.work_units, M))
//
// one full wave of resident blocks, or the work units when there are fewer (more blocks
// would have nothing to do), in whole groups of M and never below one group. A wave is
// enough: blocks of a grid-stride loop take further units when they finish, and a second
// wave would only add tail. For GridPolicy::kFixed: spec.grid_blocks. Never below 1; an
// occupancy or SM count of 0 (the block does not fit) gives one group. Saturates at INT64_MAX.
int64_t grid_for_occupancy(const KernelSpec& spec, int64_t blocks_per_sm, int64_t sms);

// The grid fstitch's launcher uses for `kernel`: grid_for_occupancy, except that a
// cooperative kernel (every block resident for its grid barrier) only shrinks: it keeps its
// planned grid when that fits the occupancy, as the planner costed its barriers for it; and
// a fixed grid with a ceiling (KernelSpec::grid_ceiling, column totals planned from a register
// estimate above the compiled kernel's) grows to the resident wave, up to the ceiling, when
// more blocks fit than planned. The same occupancy gives the same grid, so a device's runs
// give the same bits.
int64_t launch_grid(const PlannedKernel& kernel, int64_t blocks_per_sm, int64_t sms);

}  // namespace fstitch
