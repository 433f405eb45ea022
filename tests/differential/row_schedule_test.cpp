// Row kernels at the shapes that exercise their vector and scalar paths: rows of 1 to 32768
// columns (whole vectors, odd widths, a partial last tile of a block, one element), 1 to 1000
// rows, every canonical graph at f32, f16 and bf16, run on the host backend in both thread
// orders against the reference evaluator.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(RowSchedule, CanonicalGraphsAtTailAndOddShapes) {
  const std::vector<int64_t> cols = {1, 3, 7, 17, 33, 127, 1000, 1024, 4097, 8191};
  const std::vector<int64_t> rows = {1, 3, 100, 1000};
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  // Each (graph, dtype) takes every column count with a rotating row count, so that every
  // column count meets every row count; rows shrink where a case would exceed ~150k
  // elements (the host backend runs a block's threads one at a time).
  constexpr int64_t kMaxElements = 150000;
  const auto start = std::chrono::steady_clock::now();
  std::vector<DiffCase> cases;
  uint64_t data_seed = 5000;
  size_t g = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (size_t d = 0; d < dtypes.size(); ++d, ++g) {
      for (size_t i = 0; i < cols.size(); ++i) {
        size_t r = (i + g) % rows.size();
        while (r > 0 && rows[r] * cols[i] > kMaxElements) --r;
        const std::string label = canonical.name + " " + std::to_string(rows[r]) + "x" +
                                  std::to_string(cols[i]) + " " + dtype_name(dtypes[d]);
        DiffCase c;
        c.label = label;
        c.reproduce = "fstitch_differential_tests --gtest_filter=RowSchedule.*";
        c.graph = std::make_shared<const Graph>(canonical.build(rows[r], cols[i], dtypes[d]));
        c.policy = FusionPolicy::kStitch;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
      // Longer rows: several vectors per thread (12288), and rows whose cached values
      // exceed the register budget (32768), read by the strided loop.
      for (int64_t long_cols : {int64_t{12288}, int64_t{32768}}) {
        const int64_t long_rows = (g + static_cast<size_t>(long_cols)) % 2 == 0 ? 1 : 3;
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(long_rows) + "x" + std::to_string(long_cols) + " " +
                  dtype_name(dtypes[d]);
        c.reproduce = "fstitch_differential_tests --gtest_filter=RowSchedule.*";
        c.graph = std::make_shared<const Graph>(canonical.build(long_rows, long_cols, dtypes[d]));
        c.policy = FusionPolicy::kStitch;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  const HarnessOptions options = harness_options_from_env();
  size_t failed = 0;
  const std::vector<CaseResult> results = run_cases(cases, options);
  for (const CaseResult& r : results) {
    if (!r.ok) {
      ++failed;
      ADD_FAILURE() << r.report;
    }
  }
  std::printf("[ row schedule ] %zu case(s), %zu failed; %.1f s\n", cases.size(), failed,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// Rows cut into whole 16-byte vectors by a block that is not a power of two (96 threads for
// 768 bf16 columns, 192 for 768 f32...): every canonical graph at ViT widths, both thread orders.
TEST(RowSchedule, BlocksOfWholeVectors) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{400, 768}, {100, 3072}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 6000;
  size_t uneven_blocks = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        for (const PlannedKernel& k : plan_fusion(*graph, FusionOptions{}).kernels) {
          const int t = k.spec.threads_per_row;
          uneven_blocks += k.spec.schedule == ScheduleKind::kBlockPerRow && (t & (t - 1)) != 0 ? 1 : 0;
        }
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype);
        c.reproduce = "fstitch_differential_tests --gtest_filter=RowSchedule.BlocksOfWholeVectors";
        c.graph = graph;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  EXPECT_GE(uneven_blocks, 4u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// Rows whose widest vectors do not divide evenly among the row's threads (784, 1600 and 3136
// columns): whole vectors, a thread's last step guarded, its slots beyond its scalar share;
// every canonical graph, both thread orders.
TEST(RowSchedule, WholeVectorsBeyondTheScalarShare) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{300, 784}, {200, 1600}, {100, 3136}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 7000;
  size_t beyond_share = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        for (const PlannedKernel& k : plan_fusion(*graph, FusionOptions{}).kernels) {
          const int64_t t = k.spec.threads_per_row;
          if (k.spec.vector_width > 1 && k.spec.schedule != ScheduleKind::kSplitRow)
            beyond_share += k.spec.elems_per_thread > (k.spec.cols + t - 1) / t ? 1 : 0;
        }
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype);
        c.reproduce =
            "fstitch_differential_tests --gtest_filter=RowSchedule.WholeVectorsBeyondTheScalarShare";
        c.graph = graph;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  // InstanceNorm's rows of 28 x 28 and 56 x 56 (its affine per channel, a row-indexed operand).
  for (const Dims& nchw : {Dims{2, 8, 28, 28}, Dims{1, 4, 56, 56}}) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      DiffCase c;
      c.label = "instance_norm " + dims_text(nchw) + " " + dtype_name(dtype);
      c.reproduce = "fstitch_differential_tests --gtest_filter=RowSchedule.WholeVectorsBeyondTheScalarShare";
      c.graph = std::make_shared<const Graph>(instance_norm(nchw, dtype));
      c.data_seed = ++data_seed;
      cases.push_back(std::move(c));
    }
  }
  EXPECT_GE(beyond_share, 6u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
