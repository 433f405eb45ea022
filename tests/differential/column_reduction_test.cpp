// Column and middle-axis reductions (the column-tile schedule, split across blocks where the
// tiles alone do not fill the device) against the reference evaluator, in both thread orders;
// and the split combine's run-to-run bit identity.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "codegen/emit.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/kernel_args.hpp"

namespace fstitch::testing {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 20;  // keeps the file within its time on the host

const char* reduce_name(OpKind op) {
  switch (op) {
    case OpKind::kReduceSum:
      return "sum";
    case OpKind::kReduceMean:
      return "mean";
    case OpKind::kReduceMax:
      return "max";
    default:
      return "min";
  }
}

// reduce(x, axes) alone.
Graph plain_reduction(OpKind op, DType dtype, const Dims& dims, const std::vector<int64_t>& axes) {
  Graph g;
  const ValueId x = build_input(g, "x", dtype, dims);
  build_output(g, "r", build_reduce(g, op, x, axes, false));
  return g;
}

// e = x * y + bias (bias along the innermost axis), stored beside the reduction; r =
// cast_bf16(reduce(e) * scale).
Graph fused_reduction(OpKind op, DType dtype, const Dims& dims, const std::vector<int64_t>& axes) {
  Graph g;
  const ValueId x = build_input(g, "x", dtype, dims);
  const ValueId y = build_input(g, "y", dtype, dims);
  const ValueId bias = build_input(g, "bias", dtype, {dims.back()});
  const ValueId e = build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, x, y), bias);
  const ValueId r = build_reduce(g, op, e, axes, false);
  const ValueId scaled = build_binary(g, OpKind::kMul, r, build_constant_f64(g, dtype, 0.75));
  build_output(g, "r", build_cast(g, scaled, DType::kBF16));
  build_output(g, "e", e);
  return g;
}

std::string shape_text(const Dims& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

DiffCase make_case(const std::string& label, Graph graph, uint64_t seed) {
  DiffCase c;
  c.label = label;
  c.reproduce = "fstitch_differential_tests --gtest_filter='ColumnReduction.*'";
  c.graph = std::make_shared<const Graph>(std::move(graph));
  c.data_seed = seed;
  return c;
}

// Runs the cases; they must include column tiles split across blocks and unsplit ones, so
// both combines are checked.
void expect_all_ok(const std::vector<DiffCase>& cases) {
  size_t split = 0, unsplit = 0;
  for (const DiffCase& c : cases) {
    for (const PlannedKernel& k : plan_fusion(*c.graph, FusionOptions{}).kernels) {
      if (k.spec.schedule != ScheduleKind::kColumnTile) continue;
      ++(k.spec.column.split > 1 ? split : unsplit);
    }
  }
  EXPECT_GT(split, 0u);
  EXPECT_GT(unsplit, 0u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

const std::vector<int64_t> kExtents = {1, 3, 7, 33, 1000, 4097, 100000};
const std::vector<OpKind> kOps = {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax,
                                  OpKind::kReduceMin};
const std::vector<DType> kTypes = {DType::kF32, DType::kBF16, DType::kF16};

// Axis 0 of [R, K] for every pair of extents within the element bound; the operation and
// dtype rotate over the pairs, and one split shape takes every operation and dtype.
TEST(ColumnReduction, AxisZeroOfRowsByCols) {
  std::vector<DiffCase> cases;
  uint64_t seed = 9100;
  size_t turn = 0;
  for (int64_t r : kExtents) {
    for (int64_t k : kExtents) {
      if (r * k > kMaxElements) continue;
      const OpKind op = kOps[turn % kOps.size()];
      const DType t = kTypes[(turn / kOps.size()) % kTypes.size()];
      ++turn;
      cases.push_back(
          make_case(std::string(reduce_name(op)) + " axis 0 of " + shape_text({r, k}) + " " + dtype_name(t),
                    plain_reduction(op, t, {r, k}, {0}), ++seed));
    }
  }
  for (OpKind op : kOps) {
    for (DType t : kTypes) {
      cases.push_back(make_case(std::string(reduce_name(op)) + " axis 0 of 4097x33 " + dtype_name(t),
                                plain_reduction(op, t, {4097, 33}, {0}), ++seed));
    }
  }
  expect_all_ok(cases);
}

// The middle axis (and a middle run of two axes) of odd shapes.
TEST(ColumnReduction, MiddleAxes) {
  const std::vector<std::pair<Dims, std::vector<int64_t>>> shapes = {
      {{3, 1000, 7}, {1}}, {{5, 4097, 3}, {1}},    {{7, 33, 33}, {1}},   {{1, 100000, 1}, {1}},
      {{33, 7, 1}, {1}},   {{2, 3, 7, 5}, {1, 2}}, {{3, 1001, 16}, {1}}, {{1, 999, 4, 3}, {1, 2}},
  };
  std::vector<DiffCase> cases;
  uint64_t seed = 9300;
  size_t turn = 0;
  for (const auto& [dims, axes] : shapes) {
    for (DType t : kTypes) {
      const OpKind op = kOps[turn++ % kOps.size()];
      cases.push_back(
          make_case(std::string(reduce_name(op)) + " middle of " + shape_text(dims) + " " + dtype_name(t),
                    plain_reduction(op, t, dims, axes), ++seed));
    }
  }
  expect_all_ok(cases);
}

// A prologue (x * y + bias), an epilogue (result * scale, cast to bf16) and the prologue's
// value stored beside the reduction.
TEST(ColumnReduction, PrologueEpilogueAndElementOutput) {
  const std::vector<std::pair<Dims, std::vector<int64_t>>> shapes = {
      {{4097, 33}, {0}},   {{1000, 7}, {0}},    {{3, 33}, {0}},      {{100000, 3}, {0}},
      {{5, 999, 12}, {1}}, {{3, 1000, 7}, {1}}, {{1, 7, 1000}, {1}}, {{2, 3, 5, 9}, {1, 2}},
  };
  std::vector<DiffCase> cases;
  uint64_t seed = 9500;
  size_t turn = 0;
  for (const auto& [dims, axes] : shapes) {
    for (DType t : kTypes) {
      const OpKind op = kOps[turn++ % kOps.size()];
      cases.push_back(
          make_case(std::string(reduce_name(op)) + " fused over " + shape_text(dims) + " " + dtype_name(t),
                    fused_reduction(op, t, dims, axes), ++seed));
    }
  }
  expect_all_ok(cases);
}

// A split kernel gives the same bits run after run, in either thread order: its partials are
// combined in split order, whichever block arrives last.
TEST(ColumnReduction, SplitCombineIsBitIdenticalRunToRun) {
  Graph g = plain_reduction(OpKind::kReduceSum, DType::kF32, {8192, 96}, {0});
  const FusionPlan plan = plan_fusion(g, FusionOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
  const PlannedKernel& k = plan.kernels[0];
  ASSERT_GT(k.spec.column.split, 1) << dump_plan(g, plan);
  ASSERT_GT(k.zeroed_workspace.bytes, 0u);
  const auto module = host::HostModule::compile(emit_module(g, plan));

  const int64_t n = 8192 * 96;
  std::vector<float> x(static_cast<size_t>(n));
  fill_random_input(x.data(), n, DType::kF32, 1);
  const void* inputs[] = {x.data()};
  std::vector<uint32_t> r(96);  // the sums' bits
  void* outputs[] = {r.data()};
  std::vector<unsigned char> workspace(plan.workspace_bytes, 0xff);

  auto run = [&](host::ThreadOrder order) {
    std::fill(r.begin(), r.end(), 0);
    const runtime::KernelArguments args =
        launch_planned_on_host(*module, k, inputs, outputs, workspace.data(), order);
    // The last block of every tile leaves its counter at zero again.
    const unsigned char* counters = static_cast<const unsigned char*>(args.zeroed_address(k));
    for (size_t i = 0; i < k.zeroed_workspace.bytes; ++i) EXPECT_EQ(counters[i], 0) << i;
    return r;
  };
  const std::vector<uint32_t> first = run(host::ThreadOrder::kForward);
  EXPECT_EQ(run(host::ThreadOrder::kForward), first);
  EXPECT_EQ(run(host::ThreadOrder::kReverse), first);
  bool nonzero = false;
  for (uint32_t bits : first) nonzero = nonzero || bits != 0;
  EXPECT_TRUE(nonzero);
}

}  // namespace
}  // namespace fstitch::testing
