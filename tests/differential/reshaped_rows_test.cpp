// Reductions over a reshaped view: GroupNorm's statistics over [N, G, C/G x HW] and its
// affine over [N, C, HW] are one row kernel, the reshape an index map (a reshape keeps each
// element's flat index). Run on the host backend in both thread orders (or on a GPU) against
// the reference evaluator, with the plan's properties checked.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(Differential, GroupNormIsOneKernelThroughItsReshapes) {
  const GroupNormShape shapes[] = {{4, 64, 48, 8}, {2, 32, 49, 4}, {3, 6, 17, 3}, {1, 128, 1024, 32}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9300;
  for (const GroupNormShape& s : shapes) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      for (int variant = 0; variant < 2; ++variant) {
        const GroupNormExtras extras =
            variant == 1 ? GroupNormExtras::kResidualAndMean : GroupNormExtras::kNone;
        auto graph = std::make_shared<const Graph>(group_norm(s, dtype, extras));
        const std::string label = "group_norm [" + std::to_string(s.n) + ", " + std::to_string(s.c) + ", " +
                                  std::to_string(s.hw) + "] groups " + std::to_string(s.groups) + " " +
                                  dtype_name(dtype) + (variant == 1 ? " + residual, mean" : "");
        const FusionPlan p = plan_fusion(*graph, FusionOptions{});
        EXPECT_EQ(p.kernels.size(), 1u) << label << "\n" << dump_plan(*graph, p);
        EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << label;
        DiffCase c;
        c.label = label;
        c.reproduce =
            "fstitch_differential_tests --gtest_filter=Differential.GroupNormIsOneKernelThroughItsReshapes";
        c.graph = graph;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
