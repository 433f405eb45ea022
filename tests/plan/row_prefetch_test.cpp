// Reading the next row ahead (plan/row_prefetch.hpp): where the schedule allows it, what it
// costs in registers, what it buys in the cost model, and that the planner takes it exactly
// where the model scores it faster.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/canonical_graphs.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan.hpp"
#include "plan/row_prefetch.hpp"

namespace fstitch::testing {
namespace {

FusionPlan plan_for(const Graph& g, const ArchParams& arch) {
  FusionOptions o;
  o.target_sm = arch.sm;
  o.device = arch;
  return plan_fusion(g, o);
}

// An H100 of two SMs: its few resident warps cannot keep the memory busy, so what each
// thread keeps in flight decides the bandwidth.
ArchParams two_sm_device() {
  ArchParams a = *arch_params(90);
  a.sm_count = 2;
  return a;
}

// `spec` with its read-ahead switched to `p` and its grid sized for the registers that take.
KernelSpec with_prefetch(const Graph& g, const ArchParams& arch, KernelSpec spec, RowPrefetch p) {
  spec.prefetch = p;
  size_grid(make_plan_inputs(g, FusionPolicy::kStitch, arch), spec);
  return spec;
}

TEST(RowPrefetch, AppliesToUnrolledRegisterRowCachesOnly) {
  const Graph g = layer_norm(4096, 768, DType::kBF16);
  const FusionPlan p = plan_for(g, *arch_params(90));
  ASSERT_EQ(p.kernels.size(), 1u);
  KernelSpec s = p.kernels[0].spec;
  s.schedule = ScheduleKind::kWarpPerRow;
  s.cache = RowCache::kRegisters;
  s.cached = {0};
  s.vector_width = 8;
  s.row_alignment = RowVectorAlignment::kRowStart;
  EXPECT_TRUE(row_prefetch_applies(s));
  KernelSpec t = s;
  t.cache = RowCache::kShared;  // a strided pass: its vectors are not all read before use
  EXPECT_FALSE(row_prefetch_applies(t));
  t = s;
  t.row_alignment = RowVectorAlignment::kShifted;
  EXPECT_FALSE(row_prefetch_applies(t));
  t = s;
  t.vector_width = 1;
  EXPECT_FALSE(row_prefetch_applies(t));
  t = s;
  t.schedule = ScheduleKind::kSplitRow;  // a block has a slice, not a next row
  EXPECT_FALSE(row_prefetch_applies(t));
  t = s;
  t.cached.clear();
  EXPECT_FALSE(row_prefetch_applies(t));
}

// The read-ahead holds the thread's share of a row of every element-shaped input: one
// register per 4 bytes, on top of the kernel's other registers.
TEST(RowPrefetch, TheNextRowCostsItsRegisters) {
  const ArchParams arch = two_sm_device();
  for (DType t : {DType::kF32, DType::kBF16}) {
    // Rows whose plan keeps them in registers, where reading ahead applies.
    size_t checked = 0;
    for (int64_t cols : {256, 384, 512, 768, 1024, 2048, 3072, 4096}) {
      const Graph g = bias_residual_layer_norm(97, cols, t);
      const FusionPlan p = plan_for(g, arch);
      ASSERT_EQ(p.kernels.size(), 1u);
      const KernelSpec& s = p.kernels[0].spec;
      if (!row_prefetch_applies(with_prefetch(g, arch, s, RowPrefetch::kNone))) continue;
      SCOPED_TRACE(dump_plan(g, p));
      ++checked;
      const int share = static_cast<int>((s.elems_per_thread * static_cast<int64_t>(dtype_size(t)) + 3) / 4);
      EXPECT_EQ(row_prefetch_registers(g, s), 2 * share);  // x and the residual; the bias is a column
      const KernelSpec ahead = with_prefetch(g, arch, s, RowPrefetch::kNextRow);
      const KernelSpec plain = with_prefetch(g, arch, s, RowPrefetch::kNone);
      EXPECT_EQ(ahead.registers_estimate - plain.registers_estimate, 2 * share);
      EXPECT_LE(ahead.planned_blocks_per_sm, plain.planned_blocks_per_sm);
    }
    EXPECT_GE(checked, 1u) << dtype_name(t);
  }
}

// Without the read-ahead a thread's loads are in flight only until its first pass has them;
// with it, the next row's loads are in flight through the combine and the stores too.
TEST(RowPrefetch, ReadingAheadKeepsLoadsInFlightLonger) {
  const ArchParams arch = *arch_params(90);
  for (const CanonicalGraph& c : canonical_graphs()) {
    const Graph g = c.build(4096, 768, DType::kF32);
    const FusionPlan p = plan_for(g, arch);
    for (const PlannedKernel& k : p.kernels) {
      KernelSpec s = k.spec;
      s.cache = RowCache::kRegisters;
      if (!row_prefetch_applies(s)) continue;
      SCOPED_TRACE(c.name);
      const double plain = row_load_duty(arch, g, with_prefetch(g, arch, s, RowPrefetch::kNone));
      const double ahead = row_load_duty(arch, g, with_prefetch(g, arch, s, RowPrefetch::kNextRow));
      EXPECT_GT(plain, 0.0);
      EXPECT_LT(plain, 1.0);
      EXPECT_GT(ahead, plain);
      EXPECT_LE(ahead, 1.0);
      const RowTimeline t = row_timeline(arch, g, s);
      EXPECT_NEAR(plain, t.loads / (t.loads + t.rest), 1e-12);
      EXPECT_GE(t.loads, arch.memory_latency_seconds);
      EXPECT_GT(t.rest, t.first_pass);
    }
  }
  // An elementwise kernel has no rows: its loads are always in flight.
  const Graph e = gelu_bias(4096, 768, DType::kF32);
  EXPECT_EQ(row_load_duty(arch, e, plan_for(e, arch).kernels[0].spec), 1.0);
}

// The planner's choice is the model's: the chosen kernel is never estimated slower than its
// twin with the read-ahead switched, on a device whose warps cover the latency (an H100, an
// H200, an A100) and on one whose warps cannot (two SMs), and the latter reads ahead.
TEST(RowPrefetch, ThePlannerReadsAheadWhereTheModelScoresItFaster) {
  std::vector<std::pair<const char*, ArchParams>> devices = {{"h100", *arch_params_for_device("h100")},
                                                             {"h200", *arch_params_for_device("h200")},
                                                             {"a100", *arch_params_for_device("a100")},
                                                             {"two SMs", two_sm_device()}};
  size_t compared = 0, ahead_on_two_sms = 0, rows_on_two_sms = 0;
  for (const auto& [name, arch] : devices) {
    for (const CanonicalGraph& c : canonical_graphs()) {
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{16384, 128}, {12608, 768}, {4096, 1024}}) {
        for (DType t : {DType::kF32, DType::kBF16}) {
          const Graph g = c.build(rows, cols, t);
          const FusionPlan p = plan_for(g, arch);
          for (const PlannedKernel& k : p.kernels) {
            const KernelSpec& s = k.spec;
            if (!row_prefetch_applies(s)) continue;
            SCOPED_TRACE(::testing::Message()
                         << name << " " << c.name << " " << rows << "x" << cols << " " << dtype_name(t));
            const RowPrefetch other =
                s.prefetch == RowPrefetch::kNextRow ? RowPrefetch::kNone : RowPrefetch::kNextRow;
            const double twin = estimate_kernel(arch, g, with_prefetch(g, arch, s, other)).total_seconds;
            EXPECT_GE(twin, s.est_seconds * (1 - kEstimateResolution)) << dump_plan(g, p);
            ++compared;
            if (std::string(name) == "two SMs") {
              ++rows_on_two_sms;
              ahead_on_two_sms += s.prefetch == RowPrefetch::kNextRow ? 1 : 0;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 20u);
  EXPECT_GT(rows_on_two_sms, 5u);
  EXPECT_GE(ahead_on_two_sms, 5u);
}

}  // namespace
}  // namespace fstitch::testing
