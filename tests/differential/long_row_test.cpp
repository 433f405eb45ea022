// Rows past 48 KiB of shared memory, cached in dynamic shared memory: the canonical row graphs
// at such widths, run on the host backend in both thread orders (or on a GPU) and compared
// with the reference evaluator.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(Differential, LongRowsInDynamicSharedMemory) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{2, 20000}, {3, 30001}, {2, 24000}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 7000;
  size_t dynamic_kernels = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        // A device of two SMs: these few rows fill it with a block each, so some kernels keep a
        // whole row per block (tests/differential/split_row_test.cpp covers the splits).
        FusionOptions o;
        o.device = arch_params(90);
        o.device->sm_count = 2;
        for (const PlannedKernel& k : plan_fusion(*graph, o).kernels) {
          dynamic_kernels += k.spec.dynamic_shared_bytes > 0 ? 1 : 0;
          std::printf("[ long rows ] %s %lldx%lld %s: %s, %zu bytes of dynamic shared memory\n",
                      canonical.name.c_str(), static_cast<long long>(rows), static_cast<long long>(cols),
                      dtype_name(dtype), schedule_kind_name(k.spec.schedule), k.spec.dynamic_shared_bytes);
        }
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype);
        c.reproduce = "fstitch_differential_tests --gtest_filter=Differential.LongRowsInDynamicSharedMemory";
        c.graph = graph;
        c.device = o.device;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  // Several of them keep whole rows in dynamic shared memory (the rest split their rows
  // across blocks, keep them in registers, or, GELU, need no cache): that path runs here.
  EXPECT_GE(dynamic_kernels, 4u);
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
