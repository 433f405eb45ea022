// Kernels whose rows wait at a grid barrier for their column totals and then walk the rows
// again (RowStages::kRowsAfterTotals): a Sinkhorn step, a row softmax scaled by its column
// sums. Run on the host backend in both thread orders (the reverse order also starts the
// blocks from the last, so another block arrives last and releases the grid) against the
// reference evaluator, with the crossing values kept in shared memory and read again; and
// the same bits in either order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "common/random_graph.hpp"
#include "common/reduction_graphs.hpp"
#include "differential/harness.hpp"
#include "plan/arch.hpp"
#include "plan/op_class.hpp"
#include "ref/evaluator.hpp"
#include "runtime/host/host_module.hpp"

namespace fstitch::testing {
namespace {

// An H100's parameters with fewer SMs (a few hundred rows fill it) and, where given, a
// slower launch: the one-kernel plan is then what the model prefers at shapes the host
// backend runs quickly.
ArchParams small_device(int sms, double launch_seconds = 0) {
  ArchParams a = *arch_params(90);
  a.sm = 90;
  a.sm_count = sms;
  if (launch_seconds > 0) a.launch_overhead_seconds = launch_seconds;
  return a;
}

const PlannedKernel* staged_kernel(const FusionPlan& p) {
  for (const PlannedKernel& k : p.kernels) {
    if (k.spec.stages == RowStages::kRowsAfterTotals) return &k;
  }
  return nullptr;
}

TEST(GridBarrier, RowsAfterColumnTotalsGiveTheReferenceResults) {
  struct Form {
    const char* name;
    SinkhornForm form;
  };
  const Form forms[] = {
      {"sinkhorn", SinkhornForm::kScaled},
      {"sinkhorn with softmax and sums", SinkhornForm::kWithSoftmaxAndSums},
      {"input over softmax column sums", SinkhornForm::kInputScaled},
      {"sinkhorn times reciprocal sums", SinkhornForm::kReciprocal},
      {"sinkhorn plus input", SinkhornForm::kPlusInput},
      {"sinkhorn rows normalized again", SinkhornForm::kRowsNormalizedAgain},
      {"input over column sums, rows normalized again", SinkhornForm::kInputRowsNormalizedAgain}};
  // f32, bf16 (computed in f32) and f64 (8-byte kept rows and partials). Rows whose vectors
  // split evenly, odd rows (scalar steps), rows of one thread's vector,
  // and more rows than a block keeps in one loop.
  const std::pair<int64_t, int64_t> shapes[] = {{256, 256}, {100, 300}, {64, 1000}, {513, 64}, {33, 7}};
  const std::pair<int, double> devices[] = {{4, 0}, {8, 0}, {4, 10e-6}};
  std::vector<DiffCase> cases;
  std::map<BarrierCrossing, size_t> staged;
  size_t staged_f64 = 0, rows_after_barrier = 0;
  std::map<BarrierCrossing, size_t> rows_again_crossing;
  std::map<std::string, size_t> staged_forms;
  uint64_t data_seed = 13100;
  for (const Form& f : forms) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
        auto graph = std::make_shared<const Graph>(sinkhorn_step(rows, cols, dtype, f.form));
        for (const auto& [sms, launch] : devices) {
          FusionOptions o;
          o.device = small_device(sms, launch);
          const FusionPlan p = plan_fusion(*graph, o);
          if (const PlannedKernel* k = staged_kernel(p)) {
            ++staged[k->spec.crossing];
            staged_f64 += dtype == DType::kF64 ? 1 : 0;
            ++staged_forms[f.name];
            EXPECT_EQ(k->launch, LaunchKind::kCooperative);
            // The row sums after the barrier: passes over the kept rows or over rows read
            // again, where a first kernel that stores the softmax may cost less (the model
            // says so at the boundary).
            if (f.form == SinkhornForm::kRowsNormalizedAgain ||
                f.form == SinkhornForm::kInputRowsNormalizedAgain) {
              ++rows_again_crossing[k->spec.crossing];
              rows_after_barrier += p.kernels.size() == 1 ? 1 : 0;
              for (const Boundary& b : p.boundaries) EXPECT_EQ(b.cause, BoundaryCause::kCost) << b.reason;
            } else {
              EXPECT_EQ(p.kernels.size(), 1u) << dump_plan(*graph, p);
            }
            EXPECT_NE(dump_plan(*graph, p).find("stages: rows, grid barrier, rows again"), std::string::npos);
          }
          DiffCase c;
          c.label = std::string(f.name) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                    dtype_name(dtype) + " on " + std::to_string(sms) + " SMs" +
                    (launch > 0 ? ", slow launches" : "");
          c.reproduce =
              "fstitch_differential_tests "
              "--gtest_filter=GridBarrier.RowsAfterColumnTotalsGiveTheReferenceResults";
          c.graph = graph;
          c.device = o.device;
          c.data_seed = ++data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  // And the shape the H100 joins itself: 4096 rows of an attention map, 8 softmax rows of
  // each of 528 blocks kept in shared memory.
  {
    auto graph = std::make_shared<const Graph>(sinkhorn_step(4096, 1024, DType::kF32));
    const FusionPlan p = plan_fusion(*graph, FusionOptions{});
    const PlannedKernel* k = staged_kernel(p);
    ASSERT_NE(k, nullptr) << dump_plan(*graph, p);
    ++staged[k->spec.crossing];
    DiffCase c;
    c.label = "sinkhorn 4096x1024 f32 on the H100";
    c.reproduce =
        "fstitch_differential_tests --gtest_filter=GridBarrier.RowsAfterColumnTotalsGiveTheReferenceResults";
    c.graph = graph;
    c.data_seed = ++data_seed;
    cases.push_back(std::move(c));
  }
  std::printf(
      "[ grid barrier ] %zu of %zu plans keep the crossing values in shared memory, %zu read them again\n",
      staged[BarrierCrossing::kSharedRows], cases.size(), staged[BarrierCrossing::kReadAgain]);
  EXPECT_GE(staged[BarrierCrossing::kSharedRows], 6u);
  EXPECT_GE(staged[BarrierCrossing::kReadAgain], 1u);
  EXPECT_GE(staged_f64, 1u);
  EXPECT_GE(rows_after_barrier, 1u);  // one kernel that sums the rows again after the barrier
  // Passes over kept rows (the softmax crosses) and over rows read again (nothing does).
  EXPECT_GE(rows_again_crossing[BarrierCrossing::kSharedRows], 1u);
  EXPECT_GE(rows_again_crossing[BarrierCrossing::kReadAgain], 1u);
  for (const char* form :
       {"sinkhorn times reciprocal sums", "sinkhorn plus input", "sinkhorn rows normalized again"})
    EXPECT_GE(staged_forms[form], 1u) << form;
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// Random graphs whose softmaxes are divided by 1 + their sums down the other axes, among the
// generator's other operations, mixed dtypes and shapes: planned for the H100 and for a small
// device with slow launches (where the model joins more of them), run in both thread orders.
TEST(GridBarrier, RandomGraphsWithColumnSumsAfterRows) {
  RandomGraphOptions options;
  options.mode = GraphMode::kFloat;
  options.column_sums_after_rows = true;
  // And seeds whose quotients are summed along their rows again (row reductions after the
  // barrier).
  RandomGraphOptions rows_again = options;
  rows_again.row_sums_after_column_sums = true;
  // And seeds whose row-normalized quotients are divided by their column sums once more (a
  // second grid barrier).
  RandomGraphOptions columns_again = rows_again;
  columns_again.column_sums_again = true;
  std::vector<DiffCase> cases;
  size_t staged = 0, reduce_after = 0, three_walks = 0;
  std::map<BarrierCrossing, size_t> reduce_after_crossing;
  for (uint64_t draw = 1; draw <= 220; ++draw) {
    const bool again = draw > 120 && draw <= 180;
    const bool twice = draw > 180;
    const uint64_t seed = twice ? draw - 180 : again ? draw - 120 : draw;
    auto graph = std::make_shared<const Graph>(random_graph(seed, twice   ? columns_again
                                                                  : again ? rows_again
                                                                          : options));
    for (bool small : {false, true}) {
      FusionOptions o;
      if (small) o.device = small_device(4, 10e-6);
      const FusionPlan p = plan_fusion(*graph, o);
      for (const PlannedKernel& k : p.kernels) {
        if (k.spec.stages != RowStages::kRowsAfterTotals) continue;
        ++staged;
        three_walks += k.spec.row_walks >= 3 ? 1 : 0;
        const bool reduces = std::any_of(k.spec.members.begin(), k.spec.members.end(), [&](ValueId v) {
          return k.spec.after_column_totals(v) && op_family(graph->node(v).op) == OpFamily::kReduce;
        });
        reduce_after += reduces ? 1 : 0;
        if (reduces) ++reduce_after_crossing[k.spec.crossing];
      }
      DiffCase c;
      c.label = "seed " + std::to_string(seed) + (again ? " with row sums again" : "") +
                (twice ? " with row and column sums again" : "") + (small ? " on 4 SMs, slow launches" : "");
      c.reproduce =
          "fstitch_differential_tests --gtest_filter=GridBarrier.RandomGraphsWithColumnSumsAfterRows";
      c.graph = graph;
      c.device = o.device;
      c.data_seed = seed;
      cases.push_back(std::move(c));
    }
  }
  std::printf(
      "[ grid barrier ] %zu kernels of %zu random plans wait at a grid barrier, %zu reduce rows after it "
      "(%zu over kept rows), %zu walk their rows three times or more\n",
      staged, cases.size(), reduce_after, reduce_after_crossing[BarrierCrossing::kSharedRows], three_walks);
  EXPECT_GE(staged, 10u);
  EXPECT_GE(reduce_after, 10u);
  EXPECT_GE(reduce_after_crossing[BarrierCrossing::kSharedRows], 1u);
  EXPECT_GE(three_walks, 4u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// Sinkhorn iterations one after the other: each column normalization waits at a grid barrier
// of its own, and the walk after it may sum its columns again for the next barrier (or for an
// output only). f32, bf16 and f64, rows that split evenly, odd rows, more rows than a block
// keeps in one loop; run in both thread orders.
TEST(GridBarrier, SinkhornIterationsWalkTheRowsOncePerBarrier) {
  struct Form {
    int iterations;
    SinkhornOutputs outputs;
    SinkhornDividend dividend = SinkhornDividend::kIterate;
  };
  const Form forms[] = {{1, SinkhornOutputs::kSumsOut},
                        {2, SinkhornOutputs::kMatrix},
                        {3, SinkhornOutputs::kMatrix},
                        {2, SinkhornOutputs::kSumsOut},
                        {3, SinkhornOutputs::kSumsOut, SinkhornDividend::kInput}};
  const std::pair<int64_t, int64_t> shapes[] = {{256, 256}, {100, 300}, {513, 64}};
  const std::pair<int, double> devices[] = {{4, 10e-6}, {8, 0}};
  std::vector<DiffCase> cases;
  std::map<BarrierCrossing, size_t> walks_after_two;  // kernels of three walks or more
  size_t totals_after_barrier = 0;                    // kernels with column totals of a walk after a barrier
  uint64_t data_seed = 13500;
  for (const Form& f : forms) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
        auto graph = std::make_shared<const Graph>(
            sinkhorn_iterations(rows, cols, dtype, f.iterations, f.outputs, f.dividend));
        // The input form also where launches cost the most (40 us): the model then keeps
        // its walks, which read the rows again, in one kernel.
        std::vector<std::pair<int, double>> form_devices(std::begin(devices), std::end(devices));
        if (f.dividend == SinkhornDividend::kInput) form_devices.emplace_back(4, 40e-6);
        for (const auto& [sms, launch] : form_devices) {
          FusionOptions o;
          o.device = small_device(sms, launch);
          const FusionPlan p = plan_fusion(*graph, o);
          for (const PlannedKernel& k : p.kernels) {
            if (k.spec.stages != RowStages::kRowsAfterTotals) continue;
            EXPECT_EQ(k.launch, LaunchKind::kCooperative);
            if (k.spec.row_walks >= 3) {
              ++walks_after_two[k.spec.crossing];
              EXPECT_NE(dump_plan(*graph, p).find(std::to_string(k.spec.row_walks - 1) + " grid barriers"),
                        std::string::npos);
            }
            totals_after_barrier += std::any_of(k.spec.column_totals.begin(), k.spec.column_totals.end(),
                                                [&](ValueId t) { return k.spec.walk_of(t) > 0; })
                                        ? 1
                                        : 0;
          }
          DiffCase c;
          c.label = std::to_string(f.iterations) + " sinkhorn iteration(s)" +
                    (f.dividend == SinkhornDividend::kInput ? " of the input" : "") +
                    (f.outputs == SinkhornOutputs::kSumsOut ? " and their column sums " : " ") +
                    std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(dtype) + " on " +
                    std::to_string(sms) + " SMs" + (launch > 0 ? ", slow launches" : "");
          c.reproduce =
              "fstitch_differential_tests "
              "--gtest_filter=GridBarrier.SinkhornIterationsWalkTheRowsOncePerBarrier";
          c.graph = graph;
          c.device = o.device;
          c.data_seed = ++data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  std::printf(
      "[ grid barrier ] %zu kernels of %zu plans walk their rows three times or more (%zu over kept rows), "
      "%zu sum columns after a barrier\n",
      walks_after_two[BarrierCrossing::kSharedRows] + walks_after_two[BarrierCrossing::kReadAgain],
      cases.size(), walks_after_two[BarrierCrossing::kSharedRows], totals_after_barrier);
  EXPECT_GE(walks_after_two[BarrierCrossing::kSharedRows], 4u);
  EXPECT_GE(walks_after_two[BarrierCrossing::kReadAgain], 2u);  // the input's iterations: nothing crosses
  EXPECT_GE(totals_after_barrier, 8u);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

// Whichever block arrives last at the grid barrier releases the others with the same totals:
// the outputs are bit-identical with the threads and blocks in either order.
TEST(GridBarrier, TheSameBitsInEitherOrder) {
  for (SinkhornForm form : {SinkhornForm::kWithSoftmaxAndSums, SinkhornForm::kInputScaled}) {
    const Graph g = sinkhorn_step(300, 200, DType::kF32, form);
    FusionOptions o;
    o.device = small_device(4, 10e-6);
    const FusionPlan plan = plan_fusion(g, o);
    ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
    const PlannedKernel& k = plan.kernels[0];
    ASSERT_EQ(k.spec.stages, RowStages::kRowsAfterTotals) << dump_plan(g, plan);
    const size_t outputs = form == SinkhornForm::kWithSoftmaxAndSums ? 3 : 1;
    std::vector<float> in(300 * 200);
    fill_random_input(in.data(), 300 * 200, DType::kF32, 77);
    std::vector<std::vector<float>> want = {std::vector<float>(300 * 200), std::vector<float>(300 * 200),
                                            std::vector<float>(200)};
    std::vector<void*> want_ptrs;
    for (size_t i = 0; i < outputs; ++i) want_ptrs.push_back(want[i].data());
    evaluate_reference(g, {in.data()}, want_ptrs);
    const auto module = host::HostModule::compile(emit_module(g, plan));
    std::vector<unsigned char> workspace(plan.workspace_bytes, 0xff);
    auto run = [&](host::ThreadOrder order) {
      std::vector<std::vector<float>> got = {std::vector<float>(300 * 200), std::vector<float>(300 * 200),
                                             std::vector<float>(200)};
      std::vector<void*> ptrs;
      for (size_t i = 0; i < outputs; ++i) ptrs.push_back(got[i].data());
      const void* inputs[] = {in.data()};
      launch_planned_on_host(*module, k, inputs, ptrs.data(), workspace.data(), order);
      return got;
    };
    const auto forward = run(host::ThreadOrder::kForward);
    const auto reverse = run(host::ThreadOrder::kReverse);
    for (size_t i = 0; i < outputs; ++i) {
      EXPECT_EQ(std::memcmp(forward[i].data(), reverse[i].data(), forward[i].size() * sizeof(float)), 0)
          << "output " << i;
      size_t wrong = 0;
      for (size_t e = 0; e < want[i].size(); ++e) {
        if (std::fabs(forward[i][e] - want[i][e]) > 1e-5f * std::fabs(want[i][e]) + 1e-12f && wrong++ < 3)
          ADD_FAILURE() << "output " << i << " element " << e << ": " << forward[i][e] << ", the reference "
                        << want[i][e];
      }
    }
  }
}

}  // namespace
}  // namespace fstitch::testing
