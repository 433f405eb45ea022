// Every schedule the planner declares GridPolicy::kStrided computes the same bits at any grid
// from one block to its work units: what lets the CUDA backend size grids from the occupancy
// the compiled kernel really has (plan/launch_grid.hpp). Each plan runs on the host backend
// at its planned grid and at others; every output must match bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "codegen/emit.hpp"
#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/host/planned_launch.hpp"
#include "runtime/kernel_args.hpp"

namespace fstitch::testing {
namespace {

using GridChoice = std::function<int64_t(const PlannedKernel&)>;

// Runs every kernel of `plan` in step order with the grid `grid_of` picks; returns the bytes
// of every output.
std::vector<std::vector<unsigned char>> run_plan(const Graph& g, const FusionPlan& plan,
                                                 const host::HostModule& module, const GridChoice& grid_of) {
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<const void*> input_ptrs;
  uint64_t seed = 77;
  for (ValueId v : g.inputs()) {
    inputs.emplace_back(value_bytes(g, v));
    fill_random_input(inputs.back().data(), element_count(g.node(v).dims), g.node(v).dtype, ++seed);
    input_ptrs.push_back(inputs.back().data());
  }
  std::vector<std::vector<unsigned char>> outputs;
  std::vector<void*> output_ptrs;
  for (const GraphOutput& out : g.outputs()) {
    outputs.emplace_back(value_bytes(g, out.value), 0xA5);  // NaN-like fill: unwritten bytes show
    output_ptrs.push_back(outputs.back().data());
  }
  std::vector<unsigned char> workspace(plan.workspace_bytes, 0xA5);
  std::vector<const void*> constants;
  for (ValueId c : plan.constants) constants.push_back(g.node(c).data->data());
  runtime::KernelArguments args;
  for (const PlanStep& step : plan.steps) {
    EXPECT_EQ(step.kind, StepKind::kKernel);
    const PlannedKernel& k = plan.kernels[step.index];
    args.pack(k, input_ptrs.data(), output_ptrs.data(), reinterpret_cast<uintptr_t>(workspace.data()),
              constants.data());
    if (void* zeroed = args.zeroed_address(k)) std::memset(zeroed, 0, k.zeroed_workspace.bytes);
    const int64_t grid = grid_of(k);
    host::HostLaunchOptions options;
    host::set_residency(k, options);  // a split row's groups run together
    module.launch(k.name, host::Dim3{static_cast<unsigned>(grid), 1, 1},
                  host::Dim3{static_cast<unsigned>(k.spec.block_threads), 1, 1}, k.spec.dynamic_shared_bytes,
                  args.params(), options);
  }
  return outputs;
}

struct Case {
  std::string label;
  Graph graph;
  std::optional<ArchParams> device;  // plans for this device instead of the target's default
};

std::vector<Case> cases() {
  std::vector<Case> out;
  // Row schedules from sub-warp to block per row, and elementwise kernels; shapes whose rows
  // do not divide the blocks' row groups, so the last group is partial.
  for (const CanonicalGraph& c : canonical_graphs()) {
    for (auto [rows, cols] :
         {std::pair<int64_t, int64_t>{301, 8}, {77, 200}, {37, 3000}, {5, 20000}, {2000, 64}, {3000, 256}}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        out.push_back({c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(t),
                       c.build(rows, cols, t), std::nullopt});
      }
    }
  }
  // Column tiles, split across blocks and not.
  out.push_back({"bias gradient 4097x33", bias_grad_column_sum(4097, 33, DType::kF32), std::nullopt});
  out.push_back({"bias gradient 8192x96", bias_grad_column_sum(8192, 96, DType::kF32), std::nullopt});
  out.push_back({"middle axis 5x999x12", middle_axis_sum(5, 999, 12, DType::kF32), std::nullopt});
  out.push_back({"middle axis 3x1000x7", middle_axis_sum(3, 1000, 7, DType::kBF16), std::nullopt});
  // Column tiles over several passes: groups that walk more tiles than there are groups once
  // the grid shrinks (both parities of their partials), and tiles one block holds whole.
  out.push_back({"column softmax 2048x512", column_softmax(2048, 512, DType::kF32), std::nullopt});
  out.push_back({"column softmax 1024x1024 bf16", column_softmax(1024, 1024, DType::kBF16), std::nullopt});
  out.push_back({"middle axis normalize 64x96x32",
                 column_pass_graph(ColumnPassGraph::kNormalize, DType::kF32, {64, 96, 32}, {1}),
                 std::nullopt});
  // Rows read ahead: the next row is the grid stride away. Planned for a device of two SMs,
  // whose few warps cannot cover the memory latency, where the model reads ahead.
  ArchParams two_sms = *arch_params(90);
  two_sms.sm_count = 2;
  for (const CanonicalGraph& c : canonical_graphs()) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{301, 128}, {97, 768}}) {
      out.push_back({c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " bf16 on two SMs",
                     c.build(rows, cols, DType::kBF16), two_sms});
    }
  }
  return out;
}

TEST(GridIndependence, StridedKernelsGiveTheSameBitsAtAnyGrid) {
  std::set<ScheduleKind> schedules;
  bool saw_split = false, saw_read_ahead = false;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label);
    FusionOptions options;
    options.device = c.device;
    const FusionPlan plan = plan_fusion(c.graph, options);
    bool any_strided = false;
    for (const PlannedKernel& k : plan.kernels) {
      any_strided = any_strided || k.spec.grid_policy == GridPolicy::kStrided;
      schedules.insert(k.spec.schedule);
      saw_split = saw_split || k.spec.column.split > 1;
      saw_read_ahead = saw_read_ahead || k.spec.prefetch == RowPrefetch::kNextRow;
    }
    if (!any_strided) continue;
    const auto module = host::HostModule::compile(emit_module(c.graph, plan));
    const auto planned =
        run_plan(c.graph, plan, *module, [](const PlannedKernel& k) { return k.spec.grid_blocks; });
    // Strided kernels at one block (group), a few, their work units, and one more than
    // planned (within the work units); fixed kernels keep their grid. Split rows take whole
    // groups, and a cooperative grid only shrinks (its partials are placed for the planned
    // groups), as the launcher's rule has it.
    const std::vector<std::pair<const char*, std::function<int64_t(const KernelSpec&)>>> grids = {
        {"one block", [](const KernelSpec& s) { return int64_t{s.grid_multiple}; }},
        {"three blocks",
         [](const KernelSpec& s) { return std::min<int64_t>(3 * s.grid_multiple, s.work_units); }},
        {"the work units", [](const KernelSpec& s) { return s.work_units; }},
        {"planned + 1",
         [](const KernelSpec& s) { return std::min(s.grid_blocks + s.grid_multiple, s.work_units); }},
    };
    for (const auto& [name, grid] : grids) {
      SCOPED_TRACE(name);
      const auto resized = run_plan(c.graph, plan, *module, [&](const PlannedKernel& k) {
        if (k.spec.grid_policy != GridPolicy::kStrided) return k.spec.grid_blocks;
        const int64_t g = grid(k.spec);
        return k.launch == LaunchKind::kCooperative ? std::min(g, k.spec.grid_blocks) : g;
      });
      ASSERT_EQ(resized.size(), planned.size());
      for (size_t i = 0; i < planned.size(); ++i) {
        EXPECT_TRUE(resized[i] == planned[i]) << "output " << c.graph.outputs()[i].name << " differs\n"
                                              << dump_plan(c.graph, plan);
      }
    }
  }
  // Every schedule the planner produced at these shapes was covered.
  for (ScheduleKind s : {ScheduleKind::kElementwise, ScheduleKind::kSubWarpPerRow, ScheduleKind::kWarpPerRow,
                         ScheduleKind::kBlockPerRow, ScheduleKind::kColumnTile, ScheduleKind::kSplitRow}) {
    EXPECT_TRUE(schedules.count(s)) << schedule_kind_name(s) << " not covered";
  }
  EXPECT_TRUE(saw_split) << "no column tile split across blocks";
  EXPECT_TRUE(saw_read_ahead) << "no row read ahead";
}

}  // namespace
}  // namespace fstitch::testing
