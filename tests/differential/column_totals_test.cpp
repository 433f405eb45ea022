// Row reductions and column totals in one kernel: a norm's backward computes dx by rows and
// dgamma, dbeta by columns from one read of x and dy. Run on the host backend in both thread
// orders (or on a GPU) against the reference evaluator, with the plan's properties checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

// A row softmax beside the column maximum and mean of its input.
Graph softmax_with_column_stats(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  const Dims dims = {rows, cols};
  const ValueId x = build_input(g, "x", dtype, dims);
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {1}, true), dims);
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, max));
  const ValueId sum = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), dims);
  build_output(g, "y", build_binary(g, OpKind::kDiv, e, sum));
  build_output(g, "column_max", build_reduce(g, OpKind::kReduceMax, x, {0}, false));
  build_output(g, "column_mean", build_reduce(g, OpKind::kReduceMean, e, {0}, true));
  return g;
}

TEST(Differential, NormBackwardReadsXAndDyOnce) {
  struct Case {
    std::string name;
    Graph (*build)(int64_t, int64_t, DType);
  };
  const Case graphs[] = {{"layer_norm_backward", layer_norm_backward},
                         {"rms_norm_backward", rms_norm_backward},
                         {"softmax_with_column_stats", softmax_with_column_stats}};
  // Small shapes, where one kernel's two combining steps may cost more than a second
  // launch, 512 x 768, where the model fuses the f32 LayerNorm backward, and rows whose
  // vectors do not split evenly among their threads (784, 1600: whole vectors, a guarded
  // last step beside the column totals).
  const std::pair<int64_t, int64_t> shapes[] = {{64, 256}, {33, 100},  {300, 24},  {5, 2048},
                                                {1, 7},    {512, 768}, {300, 784}, {512, 1600}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9500;
  size_t fused = 0, whole_vectors = 0;
  for (const Case& c : graphs) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(c.build(rows, cols, dtype));
        const std::string label =
            c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(dtype);
        // One kernel that reads x and dy once (plus its partials), or two where the cost
        // model says so in the dump, with its numbers.
        const FusionPlan p = plan_fusion(*graph, FusionOptions{});
        if (fused_kernels(p).size() == 1) {
          ++fused;
          const KernelSpec& s = p.kernels[0].spec;
          const int64_t t = std::max(1, s.threads_per_row);
          whole_vectors +=
              !s.column_totals.empty() && s.vector_width > 1 && s.elems_per_thread > (cols + t - 1) / t;
          EXPECT_EQ(p.planned_bytes - p.kernels[0].spec.column_total_partial_bytes * 2, p.lower_bound_bytes)
              << label << "\n"
              << dump_plan(*graph, p);
        } else {
          EXPECT_FALSE(c.name == "layer_norm_backward" && rows == 512 && dtype == DType::kF32)
              << label << "\n"
              << dump_plan(*graph, p);
          for (const Boundary& b : p.boundaries)
            EXPECT_EQ(b.cause, BoundaryCause::kCost) << label << ": " << b.reason;
        }
        DiffCase d;
        d.label = label;
        d.reproduce = "fstitch_differential_tests --gtest_filter=Differential.NormBackwardReadsXAndDyOnce";
        d.graph = graph;
        d.data_seed = ++data_seed;
        cases.push_back(std::move(d));
      }
    }
  }
  std::printf("[ column totals ] %zu of %zu plans are one kernel\n", fused, cases.size());
  EXPECT_GE(fused, 6u);
  EXPECT_GE(whole_vectors, 1u);
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
