// The cost model's balance of work over the SMs and the busiest block's own path
// (plan/cost_model.hpp): properties over grids, work units and occupancies.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/canonical_graphs.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch::testing {
namespace {

TEST(SmBalance, WorkThatDividesEvenlyIsBalanced) {
  EXPECT_DOUBLE_EQ(sm_balance(132 * 6 * 5, 132 * 6, 132, 6), 1.0);
  EXPECT_DOUBLE_EQ(sm_balance(132, 132, 132, 6), 1.0);
  EXPECT_DOUBLE_EQ(sm_balance(100, 100, 132, 6), 1.0);  // fewer blocks than SMs, one unit each
  EXPECT_DOUBLE_EQ(sm_balance(1, 1, 132, 1), 1.0);
}

// 16384 rows of four per block (4096 units) over one wave of 792 blocks, 6 per SM on 132
// SMs: 136 blocks take a sixth unit. They land on different SMs, so the busiest SM holds 32
// units against a mean of 31.03, where a count by the busiest block (6 against 5.17) would
// lose 14%.
TEST(SmBalance, AnExtraUnitCostsItsSmsShareNotTheBlocks) {
  const double b = sm_balance(4096, 792, 132, 6);
  EXPECT_NEAR(b, (4096.0 / 132) / 32, 1e-12);
  EXPECT_GT(b, 0.96);
}

TEST(SmBalance, BlocksPastOneWaveRunInLaterRounds) {
  // One block past a wave doubles the time of the busiest SM.
  EXPECT_NEAR(sm_balance(793, 793, 132, 6), (793.0 / 792) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(sm_balance(2 * 792, 2 * 792, 132, 6), 1.0);
}

TEST(SmBalance, StaysInRangeOverGridsAndUnits) {
  for (int64_t units : {int64_t{1}, int64_t{7}, int64_t{131}, int64_t{133}, int64_t{4096}, int64_t{12608},
                        int64_t{1} << 40}) {
    for (int64_t grid : {int64_t{1}, int64_t{64}, int64_t{132}, int64_t{791}, int64_t{792}, int64_t{2000}}) {
      for (int per_sm : {1, 6, 32}) {
        const double b = sm_balance(units, grid, 132, per_sm);
        SCOPED_TRACE(::testing::Message() << units << " units, grid " << grid << ", " << per_sm << " per SM");
        EXPECT_GT(b, 0.0);
        EXPECT_LE(b, 1.0);
      }
    }
  }
}

// A kernel whose grid is one block reads at that block's own bytes in flight: far slower
// than the same kernel over a full wave, however much bandwidth the device has.
TEST(CostModel, OneBlockReadsAtItsOwnBytesInFlight) {
  const Graph g = layer_norm(8192, 4096, DType::kBF16);
  const FusionPlan plan = plan_fusion(g, FusionOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u);
  KernelSpec spec = plan.kernels[0].spec;
  const ArchParams arch = *arch_params(90);
  const CostBreakdown wave = estimate_kernel(arch, g, spec);
  spec.grid_blocks = 1;
  const CostBreakdown alone = estimate_kernel(arch, g, spec);
  const double in_flight = spec.block_threads * bytes_in_flight_per_thread(g, spec);
  EXPECT_GE(alone.memory_seconds,
            static_cast<double>(spec.bytes_read) * arch.memory_latency_seconds / in_flight);
  EXPECT_GT(alone.total_seconds, 50 * wave.total_seconds);
}

// Every block holding one row in a single wave: the blocks read and reduce their rows
// together before any stores, so the stores do not overlap the reads. The estimate is at
// least the reads at the kernel's bytes in flight plus the writes at the copy peak; with
// more rows than blocks the same kernel's memory time is the larger of the two instead.
TEST(CostModel, RowsInLockstepDoNotOverlapTheirStoresWithTheirReads) {
  const Graph g = layer_norm(64, 50257, DType::kF32);
  const FusionPlan plan = plan_fusion(g, FusionOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u);
  const KernelSpec& spec = plan.kernels[0].spec;
  ASSERT_LE(spec.work_units, spec.grid_blocks);
  const ArchParams arch = *arch_params(90);
  const CostBreakdown c = estimate_kernel(arch, g, spec);
  const double peak = arch.dram_bandwidth * arch.copy_efficiency;
  const double reads = static_cast<double>(spec.bytes_read) / c.bandwidth;
  const double writes = static_cast<double>(spec.bytes_written) / peak;
  EXPECT_GE(c.memory_seconds * (1 + 1e-9), reads + writes);

  const Graph many = layer_norm(8192, 4096, DType::kF32);
  const FusionPlan drifting = plan_fusion(many, FusionOptions{});
  const KernelSpec& s = drifting.kernels[0].spec;
  ASSERT_GT(s.work_units, s.grid_blocks);
  const CostBreakdown d = estimate_kernel(arch, many, s);
  const double all = static_cast<double>(s.bytes_read + s.bytes_written) / peak;
  EXPECT_LT(d.memory_seconds,
            static_cast<double>(s.bytes_read) / d.bandwidth + static_cast<double>(s.bytes_written) / peak);
  EXPECT_GE(d.memory_seconds * (1 + 1e-9), all);
}

}  // namespace
}  // namespace fstitch::testing
