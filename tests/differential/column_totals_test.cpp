// Row reductions and column totals in one kernel: a norm's backward computes dx by rows and
// dgamma, dbeta by columns from one read of x and dy. Run on the host backend in both thread
// orders (or on a GPU) against the reference evaluator, with the plan's properties checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "common/random_graph.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "plan/arch.hpp"

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
          EXPECT_EQ(p.planned_bytes - p.kernels[0].spec.column_total_traffic_bytes * 2, p.lower_bound_bytes)
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

// A column-total kernel's fixed grid grows at launch to its ceiling (or part of the way, to
// the compiled kernel's wave) where the compiled kernel fits more blocks than the register
// estimate said: the partials and counters are placed for the ceiling, and blocks that take
// fewer rows each give the same results. Planned for small devices, where the model sets
// ceilings at these shapes; launched on the host at the ceiling and halfway to it.
TEST(Differential, FixedGridsGrownToTheirCeilingGiveTheReferenceResults) {
  struct Case {
    std::string name;
    Graph (*build)(int64_t, int64_t, DType);
  };
  const Case graphs[] = {
      {"layer_norm_backward", layer_norm_backward},
      {"rms_norm_backward", rms_norm_backward},
      {"sinkhorn_step", [](int64_t r, int64_t c, DType t) { return sinkhorn_step(r, c, t); }}};
  const std::pair<int64_t, int64_t> shapes[] = {{513, 64}, {100, 300}, {512, 512}, {2048, 64}};
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> graphs_to_run;
  for (const Case& c : graphs) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        graphs_to_run.emplace_back(
            c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(dtype),
            std::make_shared<const Graph>(c.build(rows, cols, dtype)));
      }
    }
  }
  RandomGraphOptions random;
  random.mode = GraphMode::kFloat;
  random.column_sums_after_rows = true;
  for (uint64_t seed : {16, 25, 79, 96})
    graphs_to_run.emplace_back("seed " + std::to_string(seed),
                               std::make_shared<const Graph>(random_graph(seed, random)));
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9700;
  size_t ceilings = 0, staged = 0;
  for (const auto& [label, graph] : graphs_to_run) {
    for (int sms : {2, 4}) {
      ArchParams device = *arch_params(90);
      device.sm = 90;
      device.sm_count = sms;
      device.launch_overhead_seconds = 10e-6;
      FusionOptions o;
      o.device = device;
      const FusionPlan p = plan_fusion(*graph, o);
      bool any = false;
      for (const PlannedKernel& k : p.kernels) {
        if (k.spec.grid_ceiling <= k.spec.grid_blocks) continue;
        any = true;
        ++ceilings;
        staged += k.spec.stages == RowStages::kRowsAfterTotals ? 1 : 0;
        EXPECT_EQ(k.spec.grid_policy, GridPolicy::kFixed);
        EXPECT_NE(dump_plan(*graph, p).find("blocks where the compiled kernel fits them"), std::string::npos);
      }
      if (!any) continue;
      for (bool halfway : {false, true}) {
        DiffCase d;
        d.label =
            label + " on " + std::to_string(sms) + " SMs, grown " + (halfway ? "halfway" : "to the ceiling");
        d.reproduce =
            "fstitch_differential_tests "
            "--gtest_filter=Differential.FixedGridsGrownToTheirCeilingGiveTheReferenceResults";
        d.graph = graph;
        d.device = device;
        d.data_seed = ++data_seed;
        d.host_grid = [halfway](const PlannedKernel& k) {
          const KernelSpec& s = k.spec;
          if (s.grid_ceiling <= s.grid_blocks) return s.grid_blocks;
          return halfway ? s.grid_blocks + std::max<int64_t>(1, (s.grid_ceiling - s.grid_blocks) / 2)
                         : s.grid_ceiling;
        };
        cases.push_back(std::move(d));
      }
    }
  }
  std::printf("[ column totals ] %zu kernels with a ceiling, %zu of them behind a grid barrier\n", ceilings,
              staged);
  EXPECT_GE(ceilings, 20u);
  EXPECT_GE(staged, 2u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
