#include "scaling_bench.hpp"

#include <array>
#include <chrono>
#include <exception>
#include <string>

#include "markdown.hpp"
#include "plan/plan.hpp"
#include "random_dag.hpp"
#include "timing.hpp"

namespace fstitch::bench {
namespace {

// A single plan slower than this is not repeated: the report should finish even when the
// planner does not scale.
constexpr double kRepeatLimitSeconds = 2.0;
// The largest graph should plan within this (the planner's scaling goal).
constexpr double kLargeGraphGoalSeconds = 1.0;
constexpr uint64_t kSeed = 20240601;

struct Timed {
  FusionPlan plan;
  double median_seconds = 0;  // of the successful runs; with an error, the failing run's time
  int runs = 0;
  std::string error;  // what the failing run threw; a failure is not retried
};

Timed time_plan(const Graph& graph, FusionPolicy policy, int max_runs) {
  FusionOptions options;
  options.policy = policy;
  Timed t;
  std::vector<double> samples;
  while (t.runs < max_runs) {
    const auto start = std::chrono::steady_clock::now();
    try {
      t.plan = plan_fusion(graph, options);
    } catch (const std::exception& e) {
      t.error = e.what();
      t.median_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      t.runs = 1;
      return t;
    }
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ++t.runs;
    if (samples.back() > kRepeatLimitSeconds) break;
  }
  t.median_seconds = median(samples);
  return t;
}

}  // namespace

void write_scaling_section(std::ostream& out, const BenchConfig& config, Findings& findings) {
  out << "## 4. Planner scaling on random graphs (sm_90)\n\n";
  const std::vector<int64_t> sizes =
      config.quick ? std::vector<int64_t>{100, 1000} : std::vector<int64_t>{100, 1000, 10000};
  MarkdownTable table({{"graph", false},
                       {"operations"},
                       {"reductions"},
                       {"outputs"},
                       {"kernels loop/stitch"},
                       {"plan ms none"},
                       {"plan ms loop"},
                       {"plan ms stitch"},
                       {"stitch us/op"},
                       {"stitch x prev"},
                       {"runs"}});
  for (DagShape shape : {DagShape::kChain, DagShape::kDag}) {
    double previous_stitch = 0;  // 0: no previous size
    for (int64_t size : sizes) {
      RandomDagOptions options;
      options.operations = size;
      options.shape = shape;
      options.seed = kSeed + static_cast<uint64_t>(size);
      const std::string name = std::string(dag_shape_name(shape)) + " seed " + std::to_string(options.seed);
      const std::string label = "random " + name + " (" + std::to_string(size) + " operations)";
      progress("planning " + label);
      Graph graph;
      try {
        graph = random_dag(options);
      } catch (const std::exception& e) {
        table.add_row({name, std::to_string(size), "not built"});
        findings.add(label + ": the generator failed: " + e.what());
        previous_stitch = 0;
        continue;
      }
      size_t operations = 0;
      size_t reductions = 0;
      for (const Node& node : graph.nodes()) {
        if (node.op != OpKind::kInput) ++operations;
        if (op_family(node.op) == OpFamily::kReduce) ++reductions;
      }
      const std::array<FusionPolicy, 3> policies = {FusionPolicy::kNone, FusionPolicy::kLoop,
                                                    FusionPolicy::kStitch};
      std::array<Timed, 3> timed;
      for (size_t p = 0; p < policies.size(); ++p) {
        timed[p] = time_plan(graph, policies[p], config.scaling_runs);
        if (!timed[p].error.empty()) {
          findings.add(label + ": planning under " + fusion_policy_name(policies[p]) + " failed after " +
                       fixed(timed[p].median_seconds * 1e3, 0) + " ms: " + timed[p].error);
        }
      }
      auto kernels = [](const Timed& t) {
        return t.error.empty() ? std::to_string(t.plan.kernels.size()) : "failed";
      };
      // A failed plan shows how long it ran before failing.
      auto millis = [](const Timed& t) {
        return (t.error.empty() ? "" : "failed after ") + fixed(t.median_seconds * 1e3, 2);
      };
      const Timed& stitch = timed[2];
      const bool stitch_ok = stitch.error.empty();
      // A failed plan's time still counts: plan_fusion checks the kernels' launch order (where
      // a cycle among kernels is caught) after exploration, so it is nearly a whole plan.
      const std::string per_op = fixed(stitch.median_seconds * 1e6 / static_cast<double>(operations), 2);
      const std::string growth = previous_stitch > 0 ? fixed(stitch.median_seconds / previous_stitch, 1) : "";
      table.add_row({name, std::to_string(operations), std::to_string(reductions),
                     std::to_string(graph.outputs().size()), kernels(timed[1]) + " / " + kernels(stitch),
                     millis(timed[0]), millis(timed[1]), millis(stitch), per_op, growth,
                     std::to_string(stitch.runs)});
      previous_stitch = stitch.median_seconds;
      if (size >= 10000 && stitch.median_seconds > kLargeGraphGoalSeconds) {
        findings.add(label + ": the stitch planner " + (stitch_ok ? "took " : "ran for ") +
                     fixed(stitch.median_seconds, 2) + " s, above the " + fixed(kLargeGraphGoalSeconds, 0) +
                     " s goal.");
      }
    }
  }
  out << table.render() << "\n";
}

}  // namespace fstitch::bench
