// Rows that are not contiguous: reductions over axes that are not one run at the end of the
// domain. Those ending in the innermost axis, such as a BatchNorm's channels (axes 0, 2 and 3
// of [N, C, H, W]), run as row schedules (warps, blocks and groups of blocks per row) that
// unravel each element's (or each vector's, within a run of the innermost axes) flat index
// from its row and column; those whose innermost axis is kept (axes 0 and 2 of
// [6, 10, 50, 4]) as column tiles whose reduced rows unravel likewise. Against the reference
// in both thread orders, on the H100's parameters and on a device of four SMs (whose few
// blocks split the rows across groups).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

TEST(StridedRows, BatchNormAndReductionsOverSplitAxesMatchTheReference) {
  ArchParams few_sms = *arch_params(90);
  few_sms.sm_count = 4;
  std::vector<DiffCase> cases;
  uint64_t seed = 12100;
  const std::vector<DType> types = {DType::kF32, DType::kBF16, DType::kF16};
  size_t turn = 0;
  auto add = [&](const std::string& label, Graph g, bool small_device) {
    DiffCase c;
    c.label = label + (small_device ? ", 4 SMs" : "");
    c.reproduce = "fstitch_differential_tests --gtest_filter='StridedRows.*'";
    c.graph = std::make_shared<const Graph>(std::move(g));
    c.data_seed = ++seed;
    if (small_device) c.device = few_sms;
    cases.push_back(std::move(c));
  };
  for (const Dims& nchw : std::vector<Dims>{{4, 8, 12, 12}, {2, 3, 5, 7}, {8, 16, 28, 28}, {16, 32, 7, 7}}) {
    for (bool small_device : {false, true}) {
      const DType t = types[turn++ % types.size()];
      add("batch_norm_training " + dims_text(nchw) + " " + dtype_name(t), batch_norm_training(nchw, t),
          small_device);
      add("batch_norm_backward " + dims_text(nchw) + " " + dtype_name(t), batch_norm_backward(nchw, t),
          !small_device);
    }
  }
  // GroupNorm channels last: statistics over axes 1 and 3 of [N, HW, G, C/G], the affine
  // through the reshape back to [N, HW, C] in the same kernel.
  for (const GroupNormShape& shape :
       std::vector<GroupNormShape>{{2, 64, 12, 4}, {3, 32, 35, 8}, {4, 256, 64, 32}}) {
    const DType t = types[turn++ % types.size()];
    Graph g = group_norm_channels_last(shape, t);
    EXPECT_EQ(plan_fusion(g, FusionOptions{}).kernels.size(), 1u)
        << shape.n << "x" << shape.hw << "x" << shape.c;
    add("group_norm_channels_last " + std::to_string(shape.n) + "x" + std::to_string(shape.hw) + "x" +
            std::to_string(shape.c) + " (" + std::to_string(shape.groups) + " groups) " + dtype_name(t),
        std::move(g), turn % 2 == 0);
  }
  const std::vector<ColumnPassGraph> kinds = {ColumnPassGraph::kSoftmax, ColumnPassGraph::kLogSoftmax,
                                              ColumnPassGraph::kNormalize, ColumnPassGraph::kCentered};
  for (const auto& [dims, axes] :
       std::vector<std::pair<Dims, std::vector<int64_t>>>{{{16, 24, 40}, {0, 2}},
                                                          {{3, 5, 7, 9}, {0, 2}},
                                                          {{6, 10, 4, 50}, {1, 3}},
                                                          {{6, 10, 50, 4}, {0, 2}},
                                                          {{64, 3, 40, 8}, {0, 2}}}) {
    for (ColumnPassGraph kind : kinds) {
      const DType t = types[turn++ % types.size()];
      add(std::string(column_pass_graph_name(kind)) + " over axes " + std::to_string(axes[0]) + " and " +
              std::to_string(axes[1]) + " of " + dims_text(dims) + " " + dtype_name(t),
          column_pass_graph(kind, t, dims, axes), turn % 2 == 0);
    }
  }
  // The schedules these plans take: rows of warps, blocks and split groups must all appear.
  // Vectors within the innermost runs (H x W of 144 or 784; 40 and 50 columns) and single
  // elements where no vector divides them (35, 49) must both appear.
  std::set<ScheduleKind> schedules;
  std::set<int> vectors;
  for (const DiffCase& c : cases) {
    FusionOptions options;
    options.device = c.device;
    const FusionPlan p = plan_fusion(*c.graph, options);
    for (const PlannedKernel& k : p.kernels) {
      if (k.spec.reduced_axes.empty() || k.spec.contiguous_rows) continue;
      schedules.insert(k.spec.schedule);
      vectors.insert(k.spec.vector_width);
    }
  }
  EXPECT_TRUE(vectors.count(1));
  // Reduced runs whose innermost axis is kept: column tiles, their rows unraveled.
  EXPECT_TRUE(schedules.count(ScheduleKind::kColumnTile));
  EXPECT_TRUE(vectors.count(4) || vectors.count(8));
  EXPECT_TRUE(schedules.count(ScheduleKind::kSplitRow));
  EXPECT_TRUE(schedules.count(ScheduleKind::kBlockPerRow) || schedules.count(ScheduleKind::kWarpPerRow) ||
              schedules.count(ScheduleKind::kSubWarpPerRow));
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
