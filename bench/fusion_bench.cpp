#include "fusion_bench.hpp"

#include <array>
#include <exception>

#include "common/canonical_graphs.hpp"
#include "ir/verify.hpp"
#include "markdown.hpp"
#include "plan/plan.hpp"
#include "timing.hpp"

namespace fstitch::bench {
namespace {

constexpr std::array<FusionPolicy, 3> kPolicies = {FusionPolicy::kNone, FusionPolicy::kLoop,
                                                   FusionPolicy::kStitch};

struct PolicyResult {
  size_t kernels = 0;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
  double median_seconds = 0;
};

PolicyResult measure_policy(const Graph& graph, FusionPolicy policy, int runs) {
  FusionOptions options;
  options.policy = policy;
  options.target_sm = 90;
  FusionPlan plan;
  PolicyResult result;
  result.median_seconds = median_seconds(runs, [&] { plan = plan_fusion(graph, options); });
  result.kernels = plan.kernels.size();
  result.planned_bytes = plan.planned_bytes;
  result.lower_bound_bytes = plan.lower_bound_bytes;
  return result;
}

}  // namespace

void write_fusion_section(std::ostream& out, const BenchConfig& config, Findings& findings) {
  out << "## 1. Fusion of the canonical graphs (sm_90)\n\n";
  MarkdownTable table({{"graph", false},
                       {"shape", false},
                       {"dtype", false},
                       {"nodes"},
                       {"kernels none/loop/stitch"},
                       {"bytes/LB none"},
                       {"bytes/LB loop"},
                       {"bytes/LB stitch"},
                       {"LB MiB"},
                       {"plan us none"},
                       {"plan us loop"},
                       {"plan us stitch"}});
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    for (const BenchShape& shape : canonical_shapes(config)) {
      const std::string label = canonical.name + " " + shape_text(shape) + " " + dtype_name(shape.dtype);
      progress("planning " + label);
      try {
        const Graph graph = canonical.build(shape.rows, shape.cols, shape.dtype);
        verify_graph(graph);
        std::array<PolicyResult, kPolicies.size()> results;
        for (size_t p = 0; p < kPolicies.size(); ++p) {
          results[p] = measure_policy(graph, kPolicies[p], config.planner_runs);
        }
        const PolicyResult& none = results[0];
        const PolicyResult& loop = results[1];
        const PolicyResult& stitch = results[2];
        table.add_row({canonical.name, shape_text(shape), dtype_name(shape.dtype),
                       std::to_string(graph.size()),
                       std::to_string(none.kernels) + " / " + std::to_string(loop.kernels) + " / " +
                           std::to_string(stitch.kernels),
                       ratio(none.planned_bytes, none.lower_bound_bytes),
                       ratio(loop.planned_bytes, loop.lower_bound_bytes),
                       ratio(stitch.planned_bytes, stitch.lower_bound_bytes), mib(stitch.lower_bound_bytes),
                       fixed(none.median_seconds * 1e6, 1), fixed(loop.median_seconds * 1e6, 1),
                       fixed(stitch.median_seconds * 1e6, 1)});
        if (stitch.kernels != 1) {
          findings.add(label + ": " + std::to_string(stitch.kernels) + " kernels under stitch (expected 1).");
        }
        if (stitch.planned_bytes != stitch.lower_bound_bytes) {
          findings.add(label + ": stitch plans " + std::to_string(stitch.planned_bytes) + " global bytes, " +
                       ratio(stitch.planned_bytes, stitch.lower_bound_bytes) + "x the lower bound of " +
                       std::to_string(stitch.lower_bound_bytes) + ".");
        }
        if (stitch.planned_bytes > loop.planned_bytes || stitch.kernels > loop.kernels) {
          findings.add(label + ": stitch (" + std::to_string(stitch.kernels) + " kernels, " +
                       std::to_string(stitch.planned_bytes) + " bytes) is not at least as good as loop (" +
                       std::to_string(loop.kernels) + " kernels, " + std::to_string(loop.planned_bytes) +
                       " bytes).");
        }
      } catch (const std::exception& e) {
        table.add_row({canonical.name, shape_text(shape), dtype_name(shape.dtype), "error"});
        findings.add(label + ": planning failed: " + e.what());
      }
    }
  }
  out << table.render() << "\n";
}

}  // namespace fstitch::bench
