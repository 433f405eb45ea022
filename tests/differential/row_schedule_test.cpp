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

}  // namespace
}  // namespace fstitch::testing
