// Rows longer than 48 KiB of shared memory stay on chip: a block-per-row kernel keeps them
// in dynamic shared memory up to the device's per-block limit, or a group of blocks splits
// them, each keeping its slice, so a vocabulary-size row is read from global memory once.
#include <gtest/gtest.h>

#include "common/canonical_graphs.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch {
namespace {

using testing::plan;

TEST(LongRows, AVocabularySizeSoftmaxReadsItsRowsOnce) {
  for (DType t : {DType::kBF16, DType::kF32}) {
    Graph g = testing::log_softmax(64, 50257, t);
    FusionPlan p = plan(g, FusionPolicy::kStitch, 90);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    const KernelSpec& s = p.kernels[0].spec;
    // Beyond the lower bound only a split's partials: written once, read by each block.
    const uint64_t partials = s.split.partial_bytes * (1 + static_cast<uint64_t>(s.split.blocks));
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes + partials) << dump_plan(g, p);
    EXPECT_LT(partials, p.lower_bound_bytes / 100) << dump_plan(g, p);
    EXPECT_NE(s.cache, RowCache::kRecompute) << dump_plan(g, p);
    EXPECT_LE(s.shared_cache_bytes, static_cast<size_t>(p.arch.max_shared_bytes_per_block));
  }
}

// A loaded bf16 row is cached in its 16 raw bits: 2 bytes per element, half what its f32
// compute type takes, so two blocks of a row each fit an H100 SM where one f32 row did, and
// an A100's 163 KiB per block holds the row.
TEST(LongRows, ABf16VocabularyRowCachesTwoBytesPerElement) {
  constexpr int64_t kCols = 50257;
  Graph g = testing::log_softmax(2048, kCols, DType::kBF16);
  for (int sm : {90, 80}) {
    FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << dump_plan(g, p);
    const KernelSpec& s = p.kernels[0].spec;
    ASSERT_EQ(s.cache, RowCache::kShared) << dump_plan(g, p);
    ASSERT_EQ(s.cached.size(), 1u);
    EXPECT_FALSE(s.is_member(s.cached[0]));  // the input itself
    ASSERT_EQ(s.shared_buffer_types.size(), 1u);
    EXPECT_EQ(dtype_size(s.shared_buffer_types[0]), 2u);
    const size_t row_bytes = (kCols * 2 + 15) / 16 * 16;
    EXPECT_GE(s.shared_cache_bytes, row_bytes);
    EXPECT_LT(s.shared_cache_bytes, row_bytes + 2048) << "only the row and the reduction scratch";
    EXPECT_EQ(s.dynamic_shared_bytes, row_bytes);
    if (sm == 90) {
      EXPECT_GE(s.planned_blocks_per_sm, 2) << dump_plan(g, p);
    }
  }
}

TEST(LongRows, TheDevicesLimitBoundsTheRowCache) {
  // 50257 f32 values (196 KiB) fit an H100's 227 KiB per block, not an A100's 163 KiB.
  Graph g = testing::log_softmax(64, 50257, DType::kF32);
  FusionPlan a100 = plan(g, FusionPolicy::kStitch, 80);
  for (const PlannedKernel& k : a100.kernels) {
    EXPECT_LE(k.spec.shared_cache_bytes, static_cast<size_t>(a100.arch.max_shared_bytes_per_block));
    // A whole row cannot be one block's cache there; a slice of a split row can.
    if (k.spec.schedule != ScheduleKind::kSplitRow) {
      EXPECT_NE(k.spec.cache, RowCache::kShared) << dump_plan(g, a100);
    }
  }
  // A 32768-wide f32 row (128 KiB) fits both.
  Graph h = testing::log_softmax(64, 32768, DType::kF32);
  FusionPlan p = plan(h, FusionPolicy::kStitch, 80);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(h, p);
  const KernelSpec& s = p.kernels[0].spec;
  EXPECT_EQ(p.planned_bytes,
            p.lower_bound_bytes + s.split.partial_bytes * (1 + static_cast<uint64_t>(s.split.blocks)))
      << dump_plan(h, p);
}

TEST(LongRows, TheSharedMemoryBudgetIsACap) {
  Graph g = testing::log_softmax(64, 50257, DType::kBF16);
  FusionOptions o;
  o.shared_budget = 48 * 1024;
  FusionPlan p = plan_fusion(g, o);
  for (const PlannedKernel& k : p.kernels) {
    EXPECT_EQ(k.spec.dynamic_shared_bytes, 0u);
    EXPECT_LE(k.spec.shared_cache_bytes, o.shared_budget);
  }
  // A whole row no longer fits one block's shared memory (a group of blocks may still split it
  // and keep the slices on chip).
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.schedule != ScheduleKind::kSplitRow) {
      EXPECT_NE(k.spec.cache, RowCache::kShared) << dump_plan(g, p);
    }
  }
}

TEST(LongRows, RowsThatFitStaticSharedMemoryStayStatic) {
  Graph g = testing::log_softmax(64, 8192, DType::kF32);
  FusionPlan p = plan(g, FusionPolicy::kStitch, 90);
  for (const PlannedKernel& k : p.kernels) EXPECT_EQ(k.spec.dynamic_shared_bytes, 0u) << dump_plan(g, p);
}

}  // namespace
}  // namespace fstitch
