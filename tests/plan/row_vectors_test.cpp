// Properties of a row kernel's vector width: a vector is at most 16 bytes of the widest
// element-shaped access and at least 4 bytes; it divides the row and a thread's slots hold
// its whole vectors of a pass (no more elements than the scalar mapping gives it, or the
// widest vector with the few more slots its steps need), or the row is not a whole number
// of 16-byte vectors and moves in shifted ones with slots for its head and tail. Rows
// shorter than two vectors that no width divides use 1.
#include <gtest/gtest.h>

#include <string>

#include "common/canonical_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "plan/row_vectors.hpp"

namespace fstitch {
namespace {

TEST(RowVectors, WidthDividesTheRowAndKeepsTheRegisterBudget) {
  for (const auto& c : testing::canonical_graphs()) {
    for (int64_t cols : {1, 3, 8, 48, 256, 1000, 1024, 4096, 4097, 8192}) {
      for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
        const Graph g = c.build(64, cols, t);
        const FusionPlan plan = plan_fusion(g, FusionOptions{});
        for (const PlannedKernel& k : plan.kernels) {
          const KernelSpec& s = k.spec;
          SCOPED_TRACE(c.name + " 64x" + std::to_string(cols) + " " + dtype_name(t));
          const int V = s.vector_width;
          ASSERT_GE(V, 1);
          if (s.reduced_axes.empty()) {
            // Elementwise: 16 bytes of the widest element-shaped value per access.
            EXPECT_LE(V * static_cast<int64_t>(dtype_size(t)), 16);
            continue;
          }
          EXPECT_EQ(V & (V - 1), 0);
          // A split row's block walks its slice.
          const int64_t pass_cols = s.schedule == ScheduleKind::kSplitRow ? s.split.slice_cols : s.cols;
          if (s.row_alignment == RowVectorAlignment::kShifted) {
            EXPECT_NE(s.cols % V, 0);
            EXPECT_GE(s.cols, 2 * V - 1);  // every row has a whole vector
            EXPECT_EQ(V * static_cast<int64_t>(dtype_size(t)), 16);
            EXPECT_LE(shifted_row_slots(pass_cols, s.threads_per_row, V), s.elems_per_thread);
            continue;
          }
          EXPECT_EQ(s.cols % V, 0);
          const int64_t vectors = pass_cols / V;
          EXPECT_LE((vectors + s.threads_per_row - 1) / s.threads_per_row * V, s.elems_per_thread);
          if (V > 1) {
            EXPECT_LE(V * static_cast<int64_t>(dtype_size(t)), 16);
            EXPECT_GE(V * static_cast<int64_t>(dtype_size(t)), 4);
          }
        }
      }
    }
  }
}

// Rows whose 16-byte vectors do not divide evenly among a block's threads (InstanceNorm's
// 56 x 56 = 3136 columns, GPT-2 XL's 1600, 28 x 28 = 784): the widest vector with a few
// more slots a thread (13 steps of 4 f32 for 64 threads, against 49 scalars) rather than
// one element at a time, which issues four to eight times the memory instructions.
TEST(RowVectors, WholeVectorsWhereTheScalarShareWouldNarrowThem) {
  size_t beyond_share = 0;
  for (const auto& c : testing::canonical_graphs()) {
    if (c.name != "layer_norm" && c.name != "log_softmax") continue;
    for (int64_t cols : {3136, 1600, 784}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        const Graph g = c.build(8192, cols, t);
        const FusionPlan plan = plan_fusion(g, FusionOptions{});
        ASSERT_EQ(plan.kernels.size(), 1u);
        const KernelSpec& s = plan.kernels[0].spec;
        SCOPED_TRACE(c.name + " 8192x" + std::to_string(cols) + " " + dtype_name(t) + "\n" +
                     dump_plan(g, plan));
        EXPECT_EQ(s.vector_width * static_cast<int64_t>(dtype_size(t)), 16);
        const int64_t T = s.threads_per_row, V = s.vector_width;
        EXPECT_EQ(s.elems_per_thread, (cols / V + T - 1) / T * V);
        beyond_share += s.elems_per_thread > (cols + T - 1) / T ? 1 : 0;
      }
    }
  }
  EXPECT_GE(beyond_share, 4u);
}

TEST(RowVectors, WholeRowsOfWideTilesUseSixteenBytes) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    const Graph g = testing::layer_norm(8192, 4096, t);
    const FusionPlan plan = plan_fusion(g, FusionOptions{});
    ASSERT_EQ(plan.kernels.size(), 1u);
    EXPECT_EQ(plan.kernels[0].spec.vector_width * static_cast<int>(dtype_size(t)), 16) << dtype_name(t);
  }
  // 4097 columns: no vector width divides the row; it moves in shifted 16-byte vectors.
  const Graph odd = testing::softmax_scale_mask(64, 4097, DType::kBF16);
  const FusionPlan odd_plan = plan_fusion(odd, FusionOptions{});
  const KernelSpec& s = odd_plan.kernels.at(0).spec;
  EXPECT_EQ(s.vector_width, 8);
  EXPECT_EQ(s.row_alignment, RowVectorAlignment::kShifted);
  // 7 columns: shorter than two vectors of 8, so some rows would have no whole vector.
  const Graph short_rows = testing::softmax_scale_mask(64, 7, DType::kBF16);
  EXPECT_EQ(plan_fusion(short_rows, FusionOptions{}).kernels.at(0).spec.vector_width, 1);
}

// GPT-2's vocabulary rows (50257 columns) and ViT's attention rows (197) move in 16-byte
// vectors, whichever schedule and row cache the model picks.
TEST(RowVectors, OddLengthRowsMoveInShiftedSixteenByteVectors) {
  for (const auto& c : testing::canonical_graphs()) {
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{64, 50257}, {37824, 197}}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        const Graph g = c.build(rows, cols, t);
        const FusionPlan plan = plan_fusion(g, FusionOptions{});
        for (const PlannedKernel& k : plan.kernels) {
          if (k.spec.reduced_axes.empty()) continue;  // GELU: elementwise
          SCOPED_TRACE(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                       dtype_name(t));
          EXPECT_EQ(k.spec.vector_width * static_cast<int>(dtype_size(t)), 16) << dump_plan(g, plan);
          EXPECT_EQ(k.spec.row_alignment, RowVectorAlignment::kShifted);
        }
      }
    }
  }
}

// Block sizes besides the powers of two are candidates when they cut the row into whole
// 16-byte vectors per thread: 768 bf16 columns are 96 vectors of 8, so 96 threads (one
// vector each) fit; 3072 are 384 vectors (384, 192 or 96 threads; 128 is a power of two).
TEST(RowVectors, ThreadCountsThatCutTheRowIntoWholeVectors) {
  auto threads = [](int64_t cols, DType t) {
    const Graph g = testing::softmax_scale_mask(64, cols, t);
    const FusionPlan plan = plan_fusion(g, FusionOptions{});
    return vector_fitting_row_threads(g, plan.kernels.at(0).spec);
  };
  EXPECT_EQ(threads(768, DType::kBF16), (std::vector<int>{96}));
  EXPECT_EQ(threads(3072, DType::kBF16), (std::vector<int>{384, 192, 96}));
  EXPECT_EQ(threads(768, DType::kF32), (std::vector<int>{192, 96}));
  EXPECT_TRUE(threads(4096, DType::kBF16).empty());  // every such count is a power of two
  EXPECT_TRUE(threads(4097, DType::kBF16).empty());  // no whole vectors
}

// A ViT row of 768 (or 3072) 16-bit elements moves in 16-byte vectors whichever schedule
// the model picks: the candidates include block sizes that give every thread whole vectors.
TEST(RowVectors, ViTRowsOf16BitElementsMoveInSixteenByteVectors) {
  for (const auto& c : testing::canonical_graphs()) {
    for (int64_t cols : {768, 3072}) {
      for (DType t : {DType::kBF16, DType::kF16}) {
        const Graph g = c.build(64 * 197, cols, t);
        const FusionPlan plan = plan_fusion(g, FusionOptions{});
        for (const PlannedKernel& k : plan.kernels) {
          SCOPED_TRACE(c.name + " 12608x" + std::to_string(cols) + " " + dtype_name(t));
          EXPECT_EQ(k.spec.vector_width * static_cast<int>(dtype_size(t)), 16) << dump_plan(g, plan);
        }
      }
    }
  }
}

}  // namespace
}  // namespace fstitch
