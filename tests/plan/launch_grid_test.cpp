// The grid a kernel launches with at an occupancy (plan/launch_grid.hpp): its properties over
// many occupancies, work units and group sizes, and that the planner's grid is the same rule
// at the estimated occupancy.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "plan/cost_model.hpp"
#include "plan/launch_grid.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch::testing {
namespace {

KernelSpec strided(int64_t work_units, int multiple = 1, int64_t planned = 1) {
  KernelSpec s;
  s.grid_policy = GridPolicy::kStrided;
  s.work_units = work_units;
  s.grid_multiple = multiple;
  s.grid_blocks = planned;
  return s;
}

TEST(GridForOccupancy, OneWaveOrTheWorkUnitsWhenFewer) {
  // softmax at [8192, 4096] bf16 on an H200: 8192 rows, one block per row.
  EXPECT_EQ(grid_for_occupancy(strided(8192), 12, 132), 12 * 132);
  EXPECT_EQ(grid_for_occupancy(strided(8192), 4, 132), 4 * 132);
  EXPECT_EQ(grid_for_occupancy(strided(1000), 12, 132), 1000);
  EXPECT_EQ(grid_for_occupancy(strided(1), 32, 132), 1);
}

TEST(GridForOccupancy, PropertiesHoldOverOccupanciesUnitsAndGroups) {
  for (int multiple : {1, 2, 3, 4, 8, 16}) {
    for (int64_t units : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{7}, int64_t{100}, int64_t{1583},
                          int64_t{8192}, int64_t{1} << 40}) {
      for (int64_t per_sm : {0, 1, 3, 12, 32}) {
        for (int64_t sms : {0, 1, 108, 132}) {
          const KernelSpec s = strided(units, multiple);
          const int64_t grid = grid_for_occupancy(s, per_sm, sms);
          SCOPED_TRACE(::testing::Message() << "multiple " << multiple << ", units " << units << ", "
                                            << per_sm << " per SM x " << sms << " SMs: grid " << grid);
          const int64_t units_rounded_up = (units + multiple - 1) / multiple * multiple;
          EXPECT_GE(grid, 1);
          EXPECT_GE(grid, multiple);
          EXPECT_EQ(grid % multiple, 0);
          EXPECT_LE(grid, units_rounded_up);
          // Never more than one wave, unless one group is already more than a wave.
          if (per_sm * sms >= multiple) {
            EXPECT_LE(grid, per_sm * sms);
          }
          // A full wave, or all the work: nothing fits in between.
          const bool full_wave = grid + multiple > per_sm * sms;
          EXPECT_TRUE(full_wave || grid == units_rounded_up);
        }
      }
    }
  }
}

TEST(GridForOccupancy, SaturatesInsteadOfOverflowing) {
  const int64_t most = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(grid_for_occupancy(strided(most), most, most), most);
  EXPECT_EQ(grid_for_occupancy(strided(most, 8), int64_t{1} << 40, int64_t{1} << 40) % 8, 0);
  EXPECT_EQ(grid_for_occupancy(strided(most, 8), 4, 132), 4 * 132);
}

TEST(GridForOccupancy, AFixedGridIsUntouched) {
  KernelSpec s = strided(8192, 1, 777);
  s.grid_policy = GridPolicy::kFixed;
  for (int64_t per_sm : {0, 1, 12, 32}) {
    EXPECT_EQ(grid_for_occupancy(s, per_sm, 132), 777);
  }
  EXPECT_STREQ(grid_policy_name(GridPolicy::kFixed), "fixed");
  EXPECT_STREQ(grid_policy_name(GridPolicy::kStrided), "strided");
}

TEST(LaunchGrid, ACooperativeGridOnlyShrinksToFit) {
  PlannedKernel k;
  k.spec = strided(8192, 1, 4 * 132);
  k.launch = LaunchKind::kCooperative;
  EXPECT_EQ(launch_grid(k, 12, 132), 4 * 132);  // more would fit: the planned grid stays
  EXPECT_EQ(launch_grid(k, 3, 132), 3 * 132);   // fewer fit: every block still resident
  k.launch = LaunchKind::kRegular;
  EXPECT_EQ(launch_grid(k, 12, 132), 12 * 132);
  EXPECT_EQ(launch_grid(k, 3, 132), 3 * 132);
}

// A fixed grid with a ceiling (column totals whose partials are placed for a larger grid than
// planned) grows to the compiled kernel's wave, up to the ceiling, and never shrinks below
// what it planned unless it is cooperative and fewer blocks fit.
TEST(LaunchGrid, AFixedGridGrowsToTheWaveUpToItsCeiling) {
  PlannedKernel k;
  k.spec = strided(8192, 1, 4 * 132);
  k.spec.grid_policy = GridPolicy::kFixed;
  k.spec.grid_ceiling = 10 * 132;
  EXPECT_EQ(launch_grid(k, 4, 132), 4 * 132);    // as planned
  EXPECT_EQ(launch_grid(k, 7, 132), 7 * 132);    // the compiled kernel's wave
  EXPECT_EQ(launch_grid(k, 16, 132), 10 * 132);  // no further than the ceiling
  EXPECT_EQ(launch_grid(k, 2, 132), 4 * 132);    // a regular launch keeps its planned grid
  k.launch = LaunchKind::kCooperative;
  EXPECT_EQ(launch_grid(k, 7, 132), 7 * 132);
  EXPECT_EQ(launch_grid(k, 16, 132), 10 * 132);
  EXPECT_EQ(launch_grid(k, 4, 132), 4 * 132);
  k.spec.grid_ceiling = 0;
  EXPECT_EQ(launch_grid(k, 16, 132), 4 * 132);  // without a ceiling the planned grid stays
}

// Every planned kernel's grid is the rule at its estimated occupancy, and its work units are
// the cost model's.
TEST(GridForOccupancy, ThePlannedGridIsTheRuleAtTheEstimatedOccupancy) {
  std::vector<Graph> graphs;
  for (const CanonicalGraph& c : canonical_graphs()) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{8192, 4096}, {64, 1000}, {3, 70000}, {100000, 8}})
      graphs.push_back(c.build(rows, cols, DType::kBF16));
  }
  for (const ShapedGraph& r : reduction_graphs()) graphs.push_back(r.build(r.dims, DType::kF32));
  for (const Graph& g : graphs) {
    const FusionPlan p = plan(g);
    for (const PlannedKernel& k : p.kernels) {
      const KernelSpec& s = k.spec;
      // Column totals place their partials for the grid they plan: it is fixed.
      if (!s.column_totals.empty()) {
        EXPECT_EQ(s.grid_policy, GridPolicy::kFixed) << dump_plan(g, p);
        continue;
      }
      EXPECT_EQ(s.grid_policy, GridPolicy::kStrided) << dump_plan(g, p);
      // Whole groups for a split row and for a column tile's passes, single blocks otherwise.
      const int64_t group = s.schedule == ScheduleKind::kSplitRow ? s.split.blocks
                            : s.schedule == ScheduleKind::kColumnTile && s.column.releases_groups()
                                ? s.column.split
                                : 1;
      EXPECT_EQ(s.grid_multiple, group) << dump_plan(g, p);
      EXPECT_EQ(s.grid_blocks % s.grid_multiple, 0) << dump_plan(g, p);
      EXPECT_EQ(s.work_units, work_units(g, s)) << dump_plan(g, p);
      if (s.schedule == ScheduleKind::kColumnTile) {
        // The tiling sizes its grid itself (one wave of work items at most).
        EXPECT_LE(s.grid_blocks, s.work_units) << dump_plan(g, p);
        continue;
      }
      EXPECT_EQ(s.grid_blocks, grid_for_occupancy(s, s.planned_blocks_per_sm, p.arch.sm_count))
          << dump_plan(g, p);
    }
  }
}

TEST(GridForOccupancy, ThePlanDumpSaysWhatTheGridMayBe) {
  const Graph g = layer_norm(8192, 4096, DType::kBF16);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  const std::string dump = dump_plan(g, p);
  const std::string said = "grid " + std::to_string(p.kernels[0].spec.grid_blocks) + " x block " +
                           std::to_string(p.kernels[0].spec.block_threads) + " (strided over " +
                           std::to_string(p.kernels[0].spec.work_units) + " work unit(s))";
  EXPECT_NE(dump.find(said), std::string::npos) << dump;
}

// Re-estimating at an occupancy: at the estimated one it is the estimate; at a real one, the
// launch grid of that occupancy is resident at once (one wave, whole).
TEST(EstimateAtOccupancy, IsTheEstimateWithOnlyTheOccupancyReplaced) {
  const Graph g = log_softmax(8192, 4096, DType::kF32);
  const FusionPlan p = plan(g);
  for (const PlannedKernel& k : p.kernels) {
    const KernelSpec& s = k.spec;
    const CostBreakdown planned = estimate_kernel(p.arch, g, s);
    const CostBreakdown same = estimate_kernel_at_occupancy(p.arch, g, s, planned.occ.blocks_per_sm);
    EXPECT_DOUBLE_EQ(same.total_seconds, planned.total_seconds);
    EXPECT_DOUBLE_EQ(same.waves, planned.waves);
    const int real = planned.occ.blocks_per_sm + 5;
    KernelSpec launched = s;
    launched.grid_blocks = grid_for_occupancy(s, real, p.arch.sm_count);
    const CostBreakdown at_real = estimate_kernel_at_occupancy(p.arch, g, launched, real);
    EXPECT_EQ(at_real.occ.blocks_per_sm, real);
    EXPECT_EQ(at_real.resident_blocks, launched.grid_blocks);
    EXPECT_LE(at_real.waves, 1.0);
  }
}

}  // namespace
}  // namespace fstitch::testing
