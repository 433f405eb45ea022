// Column tiles over several passes: softmax, log-softmax and normalization over a non-innermost
// axis, and element values stored after a column reduction, against the reference evaluator
// in both thread orders (the host backend also starts the blocks from the last in reverse
// order). Tiles split across blocks meet as groups whose last block releases the others;
// tiles a block holds whole combine in the block. Both must appear.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"

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

}  // namespace
}  // namespace fstitch::testing
