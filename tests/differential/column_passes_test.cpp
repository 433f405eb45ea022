// Column tiles over several passes: softmax, log-softmax and normalization over a non-innermost
// axis, and element values stored after a column reduction, against the reference evaluator
// in both thread orders (the host backend also starts the blocks from the last in reverse
// order). Tiles split across blocks meet as groups whose last block releases the others;
// tiles a block holds whole combine in the block. Both must appear.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "runtime/host/host_module.hpp"

namespace fstitch::testing {
namespace {

std::string shape_text(const Dims& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

TEST(ColumnPasses, SoftmaxAndNormalizationOverLeadingAndMiddleAxes) {
  const std::vector<std::pair<Dims, std::vector<int64_t>>> shapes = {
      {{4096, 256}, {0}},     {{1000, 33}, {0}},     {{33, 1000}, {0}},   {{4097, 7}, {0}},
      {{7, 4097}, {0}},       {{3, 5}, {0}},         {{3, 1000, 7}, {1}}, {{64, 96, 32}, {1}},
      {{2, 3, 7, 5}, {1, 2}}, {{1, 20000, 12}, {1}},
  };
  const std::vector<ColumnPassGraph> kinds = {ColumnPassGraph::kSoftmax, ColumnPassGraph::kLogSoftmax,
                                              ColumnPassGraph::kNormalize, ColumnPassGraph::kCentered};
  const std::vector<DType> types = {DType::kF32, DType::kBF16, DType::kF16};
  std::vector<DiffCase> cases;
  uint64_t seed = 9700;
  size_t turn = 0;
  for (const auto& [dims, axes] : shapes) {
    for (ColumnPassGraph kind : kinds) {
      const DType t = types[turn++ % types.size()];
      DiffCase c;
      c.label = std::string(column_pass_graph_name(kind)) + " over " + shape_text(dims) + " " + dtype_name(t);
      c.reproduce = "fstitch_differential_tests --gtest_filter='ColumnPasses.*'";
      c.graph = std::make_shared<const Graph>(column_pass_graph(kind, t, dims, axes));
      c.data_seed = ++seed;
      cases.push_back(std::move(c));
    }
  }
  size_t grouped = 0, whole = 0;
  for (const DiffCase& c : cases) {
    for (const PlannedKernel& k : plan_fusion(*c.graph, FusionOptions{}).kernels) {
      if (k.spec.schedule != ScheduleKind::kColumnTile || k.spec.column.passes < 2) continue;
      ++(k.spec.column.releases_groups() ? grouped : whole);
    }
  }
  EXPECT_GT(grouped, 0u);
  EXPECT_GT(whole, 0u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// A column softmax split across a group gives the same bits run after run, in either thread
// order and with the blocks started from the last: whichever block arrives last combines the
// partials in split order.
TEST(ColumnPasses, GroupReleaseIsBitIdenticalRunToRun) {
  const Graph g = column_softmax(4096, 96, DType::kF32);
  const FusionPlan plan = plan_fusion(g, FusionOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
  const PlannedKernel& k = plan.kernels[0];
  ASSERT_TRUE(k.spec.column.releases_groups()) << dump_plan(g, plan);
  ASSERT_GT(k.zeroed_workspace.bytes, 0u);
  const auto module = host::HostModule::compile(emit_module(g, plan));

  const int64_t n = 4096 * 96;
  std::vector<float> x(static_cast<size_t>(n));
  fill_random_input(x.data(), n, DType::kF32, 7);
  const void* inputs[] = {x.data()};
  std::vector<uint32_t> y(static_cast<size_t>(n));  // the outputs' bits
  void* outputs[] = {y.data()};
  std::vector<unsigned char> workspace(plan.workspace_bytes, 0xff);
  auto run = [&](host::ThreadOrder order) {
    std::fill(y.begin(), y.end(), 0);
    launch_planned_on_host(*module, k, inputs, outputs, workspace.data(), order);
    return y;
  };
  const std::vector<uint32_t> first = run(host::ThreadOrder::kForward);
  EXPECT_EQ(run(host::ThreadOrder::kForward), first);
  EXPECT_EQ(run(host::ThreadOrder::kReverse), first);
  // Each column sums to one.
  for (int64_t c = 0; c < 96; c += 19) {
    double sum = 0;
    for (int64_t r = 0; r < 4096; ++r) {
      float v;
      std::memcpy(&v, &first[static_cast<size_t>(r * 96 + c)], sizeof v);
      sum += v;
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "column " << c;
  }
}

}  // namespace
}  // namespace fstitch::testing
