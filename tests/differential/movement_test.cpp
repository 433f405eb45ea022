// The data-movement graphs, fused under every policy, run on the host backend in both thread
// orders (or on a GPU) and compared element by element with the reference evaluator.
#include <gtest/gtest.h>

#include "common/movement_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(Differential, MovementGraphs) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{64, 128}, {3, 7}, {1, 2}, {130, 33}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 5000;
  for (const MovementGraph& graph : movement_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
        auto built = std::make_shared<const Graph>(graph.build(rows, cols, dtype));
        ++data_seed;
        for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
          DiffCase c;
          c.label = graph.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                    dtype_name(dtype) + " " + fusion_policy_name(policy);
          c.reproduce = "fstitch_differential_tests --gtest_filter=Differential.MovementGraphs";
          c.graph = built;
          c.policy = policy;
          c.data_seed = data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
