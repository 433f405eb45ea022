// Rows split across a group of blocks: properties of the plans for graphs with too few rows
// to fill the device (one long row, a batch of vocabulary rows), and what the split must keep.
#include <gtest/gtest.h>

#include "common/canonical_graphs.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

// Resident blocks of the device at the kernel's planned occupancy.
int64_t wave(const FusionPlan& p, const KernelSpec& s) {
  return static_cast<int64_t>(p.arch.sm_count) * s.planned_blocks_per_sm;
}

TEST(SplitRows, OneLongRowIsOneKernelOnSeveralBlocks) {
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    const Graph g = canonical.build(1, 100000, DType::kF32);
    const FusionPlan p = plan(g);
    for (const PlannedKernel& k : p.kernels) {
      if (k.spec.reduced_axes.empty()) continue;
      EXPECT_GT(k.spec.grid_blocks, 1) << canonical.name << "\n" << dump_plan(g, p);
    }
    EXPECT_EQ(p.kernels.size(), 1u) << canonical.name << "\n" << dump_plan(g, p);
  }
}

// One row of a million elements: sixteen blocks would leave most SMs idle, so the group has
// a block on every SM at least, and the row is read once (the partials, a few bytes per
// block, are read by every block of the group from L2).
TEST(SplitRows, OneRowOfAMillionElementsFillsTheDevice) {
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      for (int sm : {80, 90}) {
        const Graph g = canonical.build(1, 1 << 20, dtype);
        const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
        const std::string why = canonical.name + "\n" + dump_plan(g, p);
        ASSERT_EQ(p.kernels.size(), 1u) << why;
        const KernelSpec& s = p.kernels[0].spec;
        if (s.reduced_axes.empty()) continue;  // GELU: elementwise
        EXPECT_EQ(s.schedule, ScheduleKind::kSplitRow) << why;
        EXPECT_GE(s.grid_blocks, p.arch.sm_count) << why;  // every SM has a slice
        EXPECT_LE(static_cast<double>(p.planned_bytes), 1.25 * static_cast<double>(p.lower_bound_bytes))
            << why;
      }
    }
  }
}

// What every split must satisfy: its slices cover the row with whole vectors, the grid is
// whole groups that are resident together, and a cluster is only asked of sm_90.
TEST(SplitRows, SlicesCoverTheRowAndGroupsAreResident) {
  size_t splits = 0;
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    for (int64_t rows : {1, 3, 64}) {
      for (int64_t cols : {4099, 20000, 50257, 100000}) {
        for (DType t : {DType::kF32, DType::kBF16}) {
          for (int sm : {80, 90}) {
            const Graph g = canonical.build(rows, cols, t);
            const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
            for (const PlannedKernel& k : p.kernels) {
              const KernelSpec& s = k.spec;
              if (s.schedule != ScheduleKind::kSplitRow) continue;
              ++splits;
              const RowSplit& sp = s.split;
              const std::string why = canonical.name + "\n" + dump_plan(g, p);
              EXPECT_GE(sp.blocks, 2) << why;
              EXPECT_EQ(sp.slice_cols % s.vector_width, 0) << why;
              EXPECT_LT(sp.slice_cols * (sp.blocks - 1), s.cols) << why;
              EXPECT_GE(sp.slice_cols * sp.blocks, s.cols) << why;
              EXPECT_EQ(s.grid_blocks % sp.blocks, 0) << why;
              EXPECT_EQ(s.grid_blocks / sp.blocks, sp.groups) << why;
              EXPECT_LE(sp.groups, s.rows) << why;
              EXPECT_LE(s.grid_blocks, wave(p, s)) << why;
              EXPECT_LE(int64_t{sp.blocks} * s.block_threads, kMaxGroupThreads) << why;
              if (k.launch == LaunchKind::kCluster) {
                // Partials in distributed shared memory: no workspace.
                EXPECT_EQ(sm, 90) << why;
                EXPECT_LE(sp.blocks, kMaxPortableClusterBlocks) << why;
                EXPECT_EQ(k.zeroed_workspace.bytes, 0u) << why;
                EXPECT_EQ(sp.partial_bytes, 0u) << why;
              } else {
                // Partials and arrival counters in the workspace, the counters zeroed.
                EXPECT_EQ(k.launch, LaunchKind::kCooperative) << why;
                EXPECT_GT(k.zeroed_workspace.bytes, 0u) << why;
                EXPECT_GT(sp.partial_bytes, 0u) << why;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(splits, 20u);
}

// A batch of vocabulary rows (GPT-2's 64 x 50257) is more than one wave of elements: the
// plan's grid fills at least nine tenths of the device's resident blocks at the occupancy
// it planned (any group size, not only powers of two, so the grid can match the wave), and
// split rows carry that occupancy to ptxas as a minimum-blocks hint
// (NvrtcCompile.SplitRowKernelsCompileWithinTheirOccupancy checks the compiled kernel).
TEST(SplitRows, ABatchOfVocabularyRowsFillsAWave) {
  for (const char* name : {"layer_norm", "log_softmax", "rms_norm"}) {
    for (DType t : {DType::kF32, DType::kBF16}) {
      const testing::CanonicalGraph* canonical = nullptr;
      for (const testing::CanonicalGraph& c : testing::canonical_graphs())
        canonical = c.name == name ? &c : canonical;
      ASSERT_NE(canonical, nullptr);
      const Graph g = canonical->build(64, 50257, t);
      const FusionPlan p = plan(g, FusionPolicy::kStitch, 90);
      ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
      const KernelSpec& s = p.kernels[0].spec;
      EXPECT_GE(static_cast<double>(s.grid_blocks), 0.9 * static_cast<double>(wave(p, s)))
          << name << " " << dtype_name(t) << "\n"
          << dump_plan(g, p);
    }
  }
}

TEST(SplitRows, ManyRowsKeepABlockPerRow) {
  // Rows enough to fill the device several times over need no group barrier.
  const Graph g = testing::layer_norm(8192, 4096, DType::kBF16);
  const FusionPlan p = plan(g);
  for (const PlannedKernel& k : p.kernels)
    EXPECT_NE(k.spec.schedule, ScheduleKind::kSplitRow) << dump_plan(g, p);
}

}  // namespace
}  // namespace fstitch
