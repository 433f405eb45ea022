// Rows split across a group of blocks (the split-row schedule): the canonical row graphs at
// shapes with too few rows to fill the device, run on the host backend in both thread orders
// (or on a GPU) against the reference evaluator, with the partials exchanged through a
// cluster's distributed shared memory (sm_90) and through global memory (a device without
// clusters); and the group combine's bit identity run to run and across thread orders.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "codegen/emit.hpp"
#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/host/planned_launch.hpp"
#include "runtime/kernel_args.hpp"

namespace fstitch::testing {
namespace {

TEST(SplitRows, CanonicalRowGraphsWithFewLongRows) {
  // One row; two rows of an odd length (scalar slices, a shorter last slice); rows whose
  // length is a multiple of the vector width but not of the slice.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 100000}, {2, 20001}, {5, 12296}};
  // An H100 (clusters), and an A100's parameters for sm_90 code: no clusters, so the groups
  // exchange through global memory.
  const std::optional<ArchParams> devices[] = {std::nullopt, arch_params(80)};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9100;
  size_t shorter_last_slice = 0;
  std::map<GroupResidency, size_t> split;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        for (const std::optional<ArchParams>& device : devices) {
          FusionOptions o;
          o.device = device;
          if (o.device) o.device->sm = o.target_sm;
          for (const PlannedKernel& k : plan_fusion(*graph, o).kernels) {
            if (k.spec.schedule != ScheduleKind::kSplitRow) continue;
            ++split[k.spec.split.residency];
            if (k.spec.split.slice_cols * k.spec.split.blocks != cols) ++shorter_last_slice;
          }
          DiffCase c;
          c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                    dtype_name(dtype) + (device ? " (no clusters)" : "");
          c.reproduce = "fstitch_differential_tests --gtest_filter=SplitRows.CanonicalRowGraphsWithFewLongRows";
          c.graph = graph;
          c.device = device;
          c.data_seed = ++data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  // The split must be what these shapes get, for most graphs, both ways, and with uneven
  // slices too.
  EXPECT_GE(split[GroupResidency::kCluster], cases.size() / 4);
  EXPECT_GE(split[GroupResidency::kCooperative], cases.size() / 4);
  EXPECT_GT(shorter_last_slice, 0u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// One row of a million elements: a group as large as the device, each block's slice kept on
// chip across the group barriers (a softmax meets twice, a LayerNorm once or twice), with
// partials through global memory and a grid of hundreds of blocks that the host
// keeps resident; planned for an A100 (f32) and an H100 (bf16).
TEST(SplitRows, OneRowOfAMillionElementsOnAGroupAsLargeAsTheDevice) {
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9500;
  // Two passes of two reductions each, and one pass of two (plan tests cover the others).
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    if (canonical.name != "softmax_scale_mask" && canonical.name != "layer_norm") continue;
    for (int sm : {80, 90}) {
      const DType dtype = sm == 80 ? DType::kF32 : DType::kBF16;
      auto graph = std::make_shared<const Graph>(canonical.build(1, 1 << 20, dtype));
      // The harness plans for the device's parameters and sm_90 code.
      FusionOptions o;
      o.device = arch_params(sm);
      o.device->sm = o.target_sm;
      const FusionPlan plan = plan_fusion(*graph, o);
      ASSERT_EQ(plan.kernels.size(), 1u) << canonical.name << "\n" << dump_plan(*graph, plan);
      const KernelSpec& s = plan.kernels[0].spec;
      ASSERT_EQ(s.schedule, ScheduleKind::kSplitRow) << canonical.name << "\n" << dump_plan(*graph, plan);
      EXPECT_GT(s.split.blocks, 16) << canonical.name << "\n" << dump_plan(*graph, plan);
      DiffCase c;
      c.label = canonical.name + " 1x1048576 " + dtype_name(dtype) + " sm_" + std::to_string(sm);
      c.reproduce = "fstitch_differential_tests --gtest_filter=SplitRows.OneRowOfAMillionElements*";
      c.graph = graph;
      c.device = o.device;
      c.data_seed = ++data_seed;
      cases.push_back(std::move(c));
    }
  }
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// Every block combines the group's partials in one fixed order: the same bits run after run and
// in either thread order, whichever block arrives first.
class SplitRowsBits : public ::testing::TestWithParam<int> {};

TEST_P(SplitRowsBits, GroupCombineIsBitIdenticalRunToRun) {
  const Graph g = layer_norm(3, 30000, DType::kF32);
  FusionOptions o;
  o.target_sm = GetParam();  // sm_90: clusters; sm_80: a cooperative grid
  const FusionPlan plan = plan_fusion(g, o);
  ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
  const PlannedKernel& k = plan.kernels[0];
  ASSERT_EQ(k.spec.schedule, ScheduleKind::kSplitRow) << dump_plan(g, plan);
  ASSERT_EQ(k.launch, GetParam() == 90 ? LaunchKind::kCluster : LaunchKind::kCooperative);
  ASSERT_EQ(k.zeroed_workspace.bytes > 0, GetParam() == 80);
  const auto module = host::HostModule::compile(emit_module(g, plan));

  const int64_t n = 3 * 30000;
  std::vector<std::vector<float>> in;
  std::vector<const void*> inputs;
  for (const ValueId v : g.inputs()) {
    in.emplace_back(static_cast<size_t>(element_count(g.node(v).dims)));
    fill_random_input(in.back().data(), static_cast<int64_t>(in.back().size()), DType::kF32, 10 + v);
    inputs.push_back(in.back().data());
  }
  std::vector<uint32_t> y(static_cast<size_t>(n));
  void* outputs[] = {y.data()};
  std::vector<unsigned char> workspace(plan.workspace_bytes, 0xff);
  auto run = [&](host::ThreadOrder order) {
    std::fill(y.begin(), y.end(), 0);
    launch_planned_on_host(*module, k, inputs.data(), outputs, workspace.data(), order);
    return y;
  };
  const std::vector<uint32_t> first = run(host::ThreadOrder::kForward);
  EXPECT_EQ(run(host::ThreadOrder::kForward), first);
  EXPECT_EQ(run(host::ThreadOrder::kReverse), first);
  bool nonzero = false;
  for (uint32_t bits : first) nonzero = nonzero || bits != 0;
  EXPECT_TRUE(nonzero);
}

INSTANTIATE_TEST_SUITE_P(SplitRows, SplitRowsBits, ::testing::Values(90, 80));

}  // namespace
}  // namespace fstitch::testing
