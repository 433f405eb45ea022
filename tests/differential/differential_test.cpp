// Differential tests: fused plans run on the host backend against the reference evaluator.
// FSTITCH_DIFF_SEEDS=a-b narrows the random graphs to seeds a..b (default 1-520).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/canonical_graphs.hpp"
#include "common/random_graph.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/text.hpp"

namespace fstitch::testing {
namespace {

constexpr uint64_t kFirstSeed = 1;
constexpr uint64_t kLastSeed = 520;

// Every seed runs under the stitch policy; a third of them also under loop and a fifth
// also under none.
std::vector<FusionPolicy> policies_for(uint64_t seed) {
  std::vector<FusionPolicy> policies = {FusionPolicy::kStitch};
  if (seed % 3 == 0) policies.push_back(FusionPolicy::kLoop);
  if (seed % 5 == 0) policies.push_back(FusionPolicy::kNone);
  return policies;
}

struct Summary {
  size_t failed = 0;
  size_t kernels = 0;
  size_t widened = 0;
  double worst_ratio = 0;
};

Summary report(const std::vector<CaseResult>& results) {
  Summary s;
  for (size_t i = 0; i < results.size(); ++i) {
    s.kernels += results[i].kernels;
    s.widened += results[i].widened_outputs;
    s.worst_ratio = std::max(s.worst_ratio, results[i].worst_ratio);
    if (!results[i].ok) {
      ++s.failed;
      ADD_FAILURE() << results[i].report;
    }
  }
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Differential, RandomGraphs) {
  uint64_t first = kFirstSeed, last = kLastSeed;
  if (const char* range = std::getenv("FSTITCH_DIFF_SEEDS"); range != nullptr && *range != '\0') {
    const auto parsed = parse_seed_range(range);
    ASSERT_TRUE(parsed.has_value()) << "FSTITCH_DIFF_SEEDS=\"" << range
                                    << "\" is not a seed range like 17-17 or 1-520";
    first = parsed->first;
    last = parsed->second;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<DiffCase> cases;
  size_t graphs = 0;
  for (uint64_t seed = first; seed <= last; ++seed) {
    std::shared_ptr<const Graph> graph;
    try {
      graph = std::make_shared<const Graph>(random_graph(seed));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << seed << ": the random graph generator failed: " << e.what();
      continue;
    }
    ++graphs;
    for (FusionPolicy policy : policies_for(seed)) {
      DiffCase c;
      c.label = "seed " + std::to_string(seed);
      c.reproduce = "FSTITCH_DIFF_SEEDS=" + std::to_string(seed) + "-" + std::to_string(seed) +
                    " fstitch_differential_tests --gtest_filter=Differential.RandomGraphs";
      c.graph = graph;
      c.policy = policy;
      c.data_seed = seed;
      cases.push_back(std::move(c));
    }
  }
  const Summary s = report(run_cases(cases, harness_options_from_env()));
  std::printf(
      "[ differential ] %zu graph(s), %zu plan(s), %zu kernel(s), %zu failed; largest error %.3g of its "
      "limit; %zu ill-conditioned output(s) judged by their noise floor; %.1f s\n",
      graphs, cases.size(), s.kernels, s.failed, s.worst_ratio, s.widened, seconds_since(start));
  if (last - first + 1 >= 500) {
    EXPECT_GE(graphs, 500u) << "every full run covers at least 500 graphs";
  }
}

TEST(Differential, CanonicalGraphs) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{64, 256}, {8, 4096}, {1000, 30}, {1, 1}, {3, 7}};
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  const auto start = std::chrono::steady_clock::now();
  std::vector<DiffCase> cases;
  uint64_t data_seed = 1000;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : dtypes) {
        const std::string label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                                  " " + dtype_name(dtype);
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        ++data_seed;
        // Every policy for f32; the stitched plan, the one that matters, for every dtype.
        std::vector<FusionPolicy> policies = {FusionPolicy::kStitch};
        if (dtype == DType::kF32)
          policies = {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone};
        for (FusionPolicy policy : policies) {
          DiffCase c;
          c.label = label;
          c.reproduce = "fstitch_differential_tests --gtest_filter=Differential.CanonicalGraphs";
          c.graph = graph;
          c.policy = policy;
          c.data_seed = data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  const Summary s = report(run_cases(cases, harness_options_from_env()));
  std::printf(
      "[ differential ] canonical: %zu plan(s), %zu kernel(s), %zu failed; largest error %.3g of its limit; "
      "%zu ill-conditioned output(s); %.1f s\n",
      cases.size(), s.kernels, s.failed, s.worst_ratio, s.widened, seconds_since(start));
}

// The column and middle-axis sums and the column softmax at shapes that cover one row or
// column, odd sizes and a long reduced axis.
TEST(Differential, ReductionGraphs) {
  const std::vector<Dims> column_shapes = {{64, 256}, {1000, 30}, {3, 7}, {1, 1}, {4096, 8}};
  const std::vector<Dims> middle_shapes = {{4, 100, 16}, {2, 3, 5}, {1, 1, 1}, {8, 512, 1}, {3, 1, 64}};
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  const auto start = std::chrono::steady_clock::now();
  std::vector<DiffCase> cases;
  uint64_t data_seed = 5000;
  for (const ShapedGraph& reduction : reduction_graphs()) {
    // The norm backwards run at more shapes in Differential.NormBackwardReadsXAndDyOnce, GroupNorm
    // (whose channels split into groups) in Differential.GroupNormIsOneKernelThroughItsReshapes,
    // BatchNorm (four axes) in StridedRows.BatchNormAndReductionsOverSplitAxesMatchTheReference,
    // InstanceNorm (four axes) in RowSchedule.WholeVectorsBeyondTheScalarShare.
    if (reduction.name == "layer_norm_backward" || reduction.name == "rms_norm_backward" ||
        reduction.name == "group_norm" || reduction.name == "batch_norm" || reduction.name == "instance_norm")
      continue;
    const bool column = reduction.dims.size() == 2;
    for (const Dims& dims : column ? column_shapes : middle_shapes) {
      for (DType dtype : dtypes) {
        auto graph = std::make_shared<const Graph>(reduction.build(dims, dtype));
        ++data_seed;
        std::vector<FusionPolicy> policies = {FusionPolicy::kStitch};
        if (dtype == DType::kF32)
          policies = {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone};
        for (FusionPolicy policy : policies) {
          DiffCase c;
          c.label = reduction.name + " " + dims_text(dims) + " " + dtype_name(dtype);
          c.reproduce = "fstitch_differential_tests --gtest_filter=Differential.ReductionGraphs";
          c.graph = graph;
          c.policy = policy;
          c.data_seed = data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  const Summary s = report(run_cases(cases, harness_options_from_env()));
  std::printf(
      "[ differential ] reductions: %zu plan(s), %zu kernel(s), %zu failed; largest error %.3g of its "
      "limit; %.1f s\n",
      cases.size(), s.kernels, s.failed, s.worst_ratio, seconds_since(start));
}

// FSTITCH_DIFF_GRAPH=file runs a graph in the text format (a failure's "graph:" section,
// perhaps cut down by hand) under every policy, with inputs from FSTITCH_DIFF_DATA_SEED.
TEST(Differential, GraphFile) {
  const char* path = std::getenv("FSTITCH_DIFF_GRAPH");
  if (path == nullptr || *path == '\0')
    GTEST_SKIP() << "set FSTITCH_DIFF_GRAPH to a graph text file to run it";
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  std::shared_ptr<const Graph> graph;
  try {
    graph = std::make_shared<const Graph>(parse_graph(text.str()));
  } catch (const std::exception& e) {
    FAIL() << path << ": " << e.what();
  }
  uint64_t data_seed = 1;
  if (const char* seed = std::getenv("FSTITCH_DIFF_DATA_SEED"); seed != nullptr && *seed != '\0') {
    data_seed = std::strtoull(seed, nullptr, 10);
  }
  std::vector<DiffCase> cases;
  for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
    DiffCase c;
    c.label = path;
    c.reproduce = std::string("FSTITCH_DIFF_GRAPH=") + path +
                  " fstitch_differential_tests --gtest_filter=Differential.GraphFile";
    c.graph = graph;
    c.policy = policy;
    c.data_seed = data_seed;
    cases.push_back(std::move(c));
  }
  report(run_cases(cases, harness_options_from_env()));
}

TEST(Differential, SeedRangeParsing) {
  EXPECT_EQ(parse_seed_range("17-17"), std::make_optional(std::make_pair<uint64_t, uint64_t>(17, 17)));
  EXPECT_EQ(parse_seed_range("1-520"), std::make_optional(std::make_pair<uint64_t, uint64_t>(1, 520)));
  EXPECT_EQ(parse_seed_range("42"), std::make_optional(std::make_pair<uint64_t, uint64_t>(42, 42)));
  EXPECT_FALSE(parse_seed_range("").has_value());
  EXPECT_FALSE(parse_seed_range("9-3").has_value());
  EXPECT_FALSE(parse_seed_range("a-3").has_value());
  EXPECT_FALSE(parse_seed_range("3-").has_value());
  EXPECT_FALSE(parse_seed_range("-3").has_value());
  EXPECT_FALSE(parse_seed_range("1-2-3").has_value());
}

}  // namespace
}  // namespace fstitch::testing
