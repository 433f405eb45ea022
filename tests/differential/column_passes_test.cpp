// Column tiles over several passes: softmax, log-softmax and normalization over a non-innermost
// axis, and element values stored after a column reduction, against the reference evaluator
// in both thread orders (the host backend also starts the blocks from the last in reverse
// order). Tiles split across blocks meet as groups whose last block releases the others;
// tiles a block holds whole combine in the block. Both must appear, and so must chunks kept
// in shared memory (whole and in part) and sums of exp(x - max) accumulated beside their
// max (online sums).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "ref/evaluator.hpp"
#include "runtime/host/host_module.hpp"

namespace fstitch::testing {
namespace {

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
      c.label = std::string(column_pass_graph_name(kind)) + " over " + dims_text(dims) + " " + dtype_name(t);
      c.reproduce = "fstitch_differential_tests --gtest_filter='ColumnPasses.*'";
      c.graph = std::make_shared<const Graph>(column_pass_graph(kind, t, dims, axes));
      c.data_seed = ++seed;
      cases.push_back(std::move(c));
    }
  }
  // On a device of four SMs (few blocks, so long chunks) with 24 KiB of shared memory a
  // block, a thread's rows only partly fit the shared cache: the others are read again by
  // each pass.
  ArchParams few_sms = *arch_params(90);
  few_sms.sm_count = 4;
  for (const Dims& dims : std::vector<Dims>{{4096, 256}, {20000, 12}}) {
    for (ColumnPassGraph kind : kinds) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        DiffCase c;
        c.label = std::string(column_pass_graph_name(kind)) + " over " + dims_text(dims) + " " +
                  dtype_name(t) + ", 4 SMs, 24 KiB of shared memory a block";
        c.reproduce = "fstitch_differential_tests --gtest_filter='ColumnPasses.*'";
        c.graph = std::make_shared<const Graph>(column_pass_graph(kind, t, dims, {0}));
        c.data_seed = ++seed;
        c.shared_budget = 24 * 1024;
        c.device = few_sms;
        cases.push_back(std::move(c));
      }
    }
  }
  size_t grouped = 0, whole = 0, shared_whole = 0, shared_part = 0, online = 0;
  for (const DiffCase& c : cases) {
    FusionOptions options;
    if (c.shared_budget) options.shared_budget = *c.shared_budget;
    options.device = c.device;
    for (const PlannedKernel& k : plan_fusion(*c.graph, options).kernels) {
      if (k.spec.schedule != ScheduleKind::kColumnTile || k.spec.column.passes < 2) continue;
      ++(k.spec.column.releases_groups() ? grouped : whole);
      online += k.spec.online_sums.size();
      if (k.spec.cache == RowCache::kShared)
        ++(k.spec.column.shared_rows < k.spec.column.rows_per_thread ? shared_part : shared_whole);
    }
  }
  EXPECT_GT(grouped, 0u);
  EXPECT_GT(whole, 0u);
  EXPECT_GT(shared_whole, 0u);
  EXPECT_GT(shared_part, 0u);
  EXPECT_GT(online, 0u);
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

// Online sums in other graphs: f64, a scaled and masked softmax, one over a middle axis,
// and a log-sum-exp whose only outputs are per column (one pass would store nothing after the
// reductions: it keeps the plain passes). Each against the reference in both thread orders.
TEST(ColumnPasses, OnlineSumsInOtherGraphs) {
  struct Built {
    std::string label;
    Graph graph;
    bool online;  // whether the plan should take an online sum
  };
  auto softmax_of = [](Graph& g, ValueId a, const Dims& dims, int64_t axis) {
    const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, a, {axis}, true), dims);
    const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, a, max));
    const ValueId sum = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {axis}, true), dims);
    return build_binary(g, OpKind::kDiv, e, sum);
  };
  std::vector<Built> built;
  {
    Graph g;
    const Dims dims = {1000, 33};
    build_output(g, "y", softmax_of(g, build_input(g, "x", DType::kF64, dims), dims, 0));
    built.push_back({"f64 softmax over axis 0 of 1000x33", std::move(g), true});
  }
  {
    Graph g;
    const Dims dims = {2048, 96};
    const ValueId x = build_input(g, "x", DType::kF32, dims);
    const ValueId mask = build_input(g, "mask", DType::kF32, dims);
    const ValueId scaled = build_binary(
        g, OpKind::kAdd,
        build_binary(g, OpKind::kMul, x, build_broadcast(g, build_constant_f64(g, DType::kF32, 0.125), dims)),
        mask);
    build_output(g, "y", softmax_of(g, scaled, dims, 0));
    built.push_back({"scaled, masked f32 softmax over axis 0 of 2048x96", std::move(g), true});
  }
  {
    Graph g;
    const Dims dims = {64, 512, 64};
    build_output(g, "y", softmax_of(g, build_input(g, "x", DType::kF32, dims), dims, 1));
    built.push_back({"f32 softmax over axis 1 of 64x512x64", std::move(g), true});
  }
  {
    Graph g;
    const Dims dims = {4096, 64};
    const ValueId x = build_input(g, "x", DType::kF32, dims);
    const ValueId max = build_reduce(g, OpKind::kReduceMax, x, {0}, true);
    const ValueId e =
        build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, build_broadcast(g, max, dims)));
    const ValueId sum = build_reduce(g, OpKind::kReduceSum, e, {0}, true);
    build_output(g, "lse", build_binary(g, OpKind::kAdd, build_unary(g, OpKind::kLog, sum), max));
    built.push_back({"f32 log-sum-exp over axis 0 of 4096x64", std::move(g), false});
  }
  std::vector<DiffCase> cases;
  uint64_t seed = 9900;
  for (Built& b : built) {
    const FusionPlan p = plan_fusion(b.graph, FusionOptions{});
    size_t online = 0;
    for (const PlannedKernel& k : p.kernels) online += k.spec.online_sums.size();
    EXPECT_EQ(online > 0, b.online) << b.label << "\n" << dump_plan(b.graph, p);
    DiffCase c;
    c.label = b.label;
    c.reproduce = "fstitch_differential_tests --gtest_filter='ColumnPasses.OnlineSumsInOtherGraphs'";
    c.graph = std::make_shared<const Graph>(std::move(b.graph));
    c.data_seed = ++seed;
    cases.push_back(std::move(c));
  }
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// A column softmax whose sums accumulate beside their maxes (online) gives the reference's
// values where the columns hold what the rescaling must get right: -inf (a whole column of
// it, whose sum is NaN as exp(-inf - -inf) makes it; and a column's first half of it),
// +inf, NaN, a max that grows at every element, one that never grows, values near exp's
// overflow. The column sums are outputs too. Both thread orders, and the same bits in each.
TEST(ColumnPasses, OnlineSumsKeepThePlainSumsSpecialValues) {
  constexpr int64_t R = 2048, C = 64;
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF32, {R, C});
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {0}, true), {R, C});
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, max));
  const ValueId sum = build_reduce(g, OpKind::kReduceSum, e, {0}, true);
  build_output(g, "y", build_binary(g, OpKind::kDiv, e, build_broadcast(g, sum, {R, C})));
  build_output(g, "s", sum);
  const FusionPlan plan = plan_fusion(g, FusionOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
  const PlannedKernel& k = plan.kernels[0];
  ASSERT_EQ(k.spec.online_sums.size(), 1u) << dump_plan(g, plan);
  ASSERT_TRUE(k.spec.column.releases_groups()) << dump_plan(g, plan);
  EXPECT_EQ(k.spec.column.passes, 2) << dump_plan(g, plan);
  EXPECT_NE(dump_plan(g, plan).find("online sum: %"), std::string::npos);

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in(static_cast<size_t>(R * C));
  fill_random_input(in.data(), R * C, DType::kF32, 31);
  auto at = [&](int64_t r, int64_t c) -> float& { return in[static_cast<size_t>(r * C + c)]; };
  for (int64_t r = 0; r < R; ++r) {
    at(r, 0) = -inf;                                        // the whole column: NaN sum
    if (r < R / 2) at(r, 1) = -inf;                         // the first half
    at(r, 4) = static_cast<float>(r) * 0.01f;               // grows at every element
    at(r, 5) = static_cast<float>(R - r) * 0.01f;           // never grows after the first
    at(r, 6) = 80.0f + static_cast<float>(r % 97) * 0.08f;  // exp(x) alone would overflow
  }
  at(R / 3, 2) = inf;
  at(R / 5, 3) = std::numeric_limits<float>::quiet_NaN();
  at(R - 1, 7) = -inf;  // a single -inf at the very end

  std::vector<float> want_y(static_cast<size_t>(R * C)), want_s(static_cast<size_t>(C));
  evaluate_reference(g, {in.data()}, {want_y.data(), want_s.data()});
  const auto module = host::HostModule::compile(emit_module(g, plan));
  std::vector<unsigned char> workspace(plan.workspace_bytes, 0xff);
  auto run = [&](host::ThreadOrder order) {
    std::vector<float> y(static_cast<size_t>(R * C)), s(static_cast<size_t>(C));
    const void* inputs[] = {in.data()};
    void* outputs[] = {y.data(), s.data()};
    launch_planned_on_host(*module, k, inputs, outputs, workspace.data(), order);
    return std::make_pair(y, s);
  };
  auto close = [](float got, float want) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= 1e-5f * std::fabs(want) + 1e-30f;
  };
  const auto forward = run(host::ThreadOrder::kForward);
  for (int64_t c = 0; c < C; ++c) {
    EXPECT_TRUE(close(forward.second[static_cast<size_t>(c)], want_s[static_cast<size_t>(c)]))
        << "sum of column " << c << ": " << forward.second[static_cast<size_t>(c)] << ", the reference "
        << want_s[static_cast<size_t>(c)];
  }
  int64_t wrong = 0;
  for (size_t i = 0; i < want_y.size(); ++i) {
    if (!close(forward.first[i], want_y[i]) && wrong++ < 5)
      ADD_FAILURE() << "y at row " << i / C << ", column " << i % C << ": " << forward.first[i]
                    << ", the reference " << want_y[i];
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(std::isnan(forward.second[0]));
  const auto reverse = run(host::ThreadOrder::kReverse);
  EXPECT_EQ(std::memcmp(reverse.first.data(), forward.first.data(), forward.first.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(reverse.second.data(), forward.second.data(), forward.second.size() * sizeof(float)),
            0);
}

}  // namespace
}  // namespace fstitch::testing
