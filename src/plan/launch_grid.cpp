#include "plan/launch_grid.hpp"

#include <algorithm>
#include <limits>

namespace fstitch {

const char* grid_policy_name(GridPolicy p) {
  return p == GridPolicy::kStrided ? "strided" : "fixed";
}

namespace {

constexpr int64_t kMaxGrid = std::numeric_limits<int64_t>::max();

// a x b for non-negative a and b, saturated at INT64_MAX.
int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMaxGrid / b ? kMaxGrid : a * b;
}

}  // namespace

int64_t grid_for_occupancy(const KernelSpec& spec, int64_t blocks_per_sm, int64_t sms) {
  if (spec.grid_policy == GridPolicy::kFixed) return std::max<int64_t>(1, spec.grid_blocks);
  const int64_t multiple = std::max(1, spec.grid_multiple);
  const int64_t units = std::max<int64_t>(1, spec.work_units);
  // Work units rounded up to whole groups (saturated: the result only has to stay a multiple).
  const int64_t groups_of_work = units / multiple + (units % multiple != 0 ? 1 : 0);
  const int64_t most = saturating_mul(groups_of_work, multiple) / multiple * multiple;
  const int64_t wave = saturating_mul(std::max<int64_t>(0, blocks_per_sm), std::max<int64_t>(0, sms));
  const int64_t resident = wave / multiple * multiple;
  return std::clamp(resident, multiple, std::max(multiple, most));
}

int64_t launch_grid(const PlannedKernel& kernel, int64_t blocks_per_sm, int64_t sms) {
  const KernelSpec& s = kernel.spec;
  if (s.grid_policy == GridPolicy::kFixed && s.grid_ceiling > s.grid_blocks) {
    const int64_t wave = saturating_mul(std::max<int64_t>(0, blocks_per_sm), std::max<int64_t>(0, sms));
    if (wave > s.grid_blocks) return std::min(wave, s.grid_ceiling);
  }
  const int64_t grid = grid_for_occupancy(kernel.spec, blocks_per_sm, sms);
  if (kernel.launch == LaunchKind::kCooperative)
    return std::min(std::max<int64_t>(1, kernel.spec.grid_blocks), grid);
  return grid;
}

}  // namespace fstitch
