// Row kernels that read their next row ahead (RowPrefetch::kNextRow): planned for a device of
// two SMs, whose few resident warps cannot cover the memory latency, so the cost model picks
// the read-ahead for most of them; each block then runs many rows, the last ones past the
// end of the tensor for some slots. Every canonical graph at widths with and without a partial
// last vector step, f32, f16 and bf16, run on the host backend in both thread orders against
// the reference evaluator.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(Differential, RowsReadAheadGiveTheReferenceResults) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{301, 128}, {129, 256}, {257, 200}, {97, 768}, {45, 1000}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9100;
  size_t read_ahead = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        FusionOptions o;
        o.device = arch_params(90);
        o.device->sm_count = 2;
        for (const PlannedKernel& k : plan_fusion(*graph, o).kernels)
          read_ahead += k.spec.prefetch == RowPrefetch::kNextRow ? 1 : 0;
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype);
        c.reproduce =
            "fstitch_differential_tests --gtest_filter=Differential.RowsReadAheadGiveTheReferenceResults";
        c.graph = graph;
        c.device = o.device;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  std::printf("[ read ahead ] %zu of %zu cases read their next row ahead\n", read_ahead, cases.size());
  EXPECT_GE(read_ahead, cases.size() / 2);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
