// Rows that are not a whole number of vectors (GPT-2's 50257 columns, ViT's 197): a pass
// moves the elements before the row's first vector boundary and after its last whole vector
// one at a time, and the vectors between them whole (RowVectorAlignment::kShifted). Every
// row schedule and row cache that takes shifted vectors, at f32, f16 and bf16, run on the
// host backend in both thread orders against the reference evaluator.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

// How a case steers the planner: its own choice; no register row cache (shared memory or
// re-reads); no row cache at all; a device of two SMs (a few rows fill it with a block each
// instead of splitting them).
enum class Steer { kNone, kNoRegisterCache, kReRead, kTwoSms };

TEST(ShiftedRows, EveryScheduleAndCacheMatchesTheReference) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{300, 197}, {64, 1001}, {6, 4097},
                                                           {3, 30001}, {2, 50257}, {100, 31}};
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  const Steer steers[] = {Steer::kNone, Steer::kNoRegisterCache, Steer::kReRead, Steer::kTwoSms};
  std::vector<DiffCase> cases;
  std::map<std::string, int> shifted;  // "schedule / cache" of every shifted kernel planned
  uint64_t data_seed = 9400;
  size_t rotation = 0;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (Steer steer : steers) {
        const DType dtype = dtypes[rotation++ % dtypes.size()];
        auto graph = std::make_shared<const Graph>(canonical.build(rows, cols, dtype));
        DiffCase c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype) + " steer " + std::to_string(static_cast<int>(steer));
        c.reproduce = "fstitch_differential_tests --gtest_filter=ShiftedRows.*";
        c.graph = graph;
        c.data_seed = ++data_seed;
        FusionOptions o;
        if (steer == Steer::kNoRegisterCache || steer == Steer::kReRead) c.register_cap = o.register_cap = 4;
        if (steer == Steer::kReRead) c.shared_budget = o.shared_budget = 0;
        if (steer == Steer::kTwoSms) {
          c.device = o.device = arch_params(90);
          o.device->sm_count = c.device->sm_count = 2;
        }
        for (const PlannedKernel& k : plan_fusion(*graph, o).kernels) {
          const KernelSpec& s = k.spec;
          if (s.row_alignment != RowVectorAlignment::kShifted) continue;
          EXPECT_NE(s.cols % s.vector_width, 0) << c.label;
          const char* cache = s.cache == RowCache::kRegisters ? (s.cached.empty() ? "none" : "registers")
                              : s.cache == RowCache::kShared  ? "shared"
                                                              : "re-read";
          ++shifted[std::string(schedule_kind_name(s.schedule)) + " / " + cache];
        }
        cases.push_back(std::move(c));
      }
    }
  }
  for (const auto& [what, count] : shifted)
    std::printf("[ shifted rows ] %s: %d kernel(s)\n", what.c_str(), count);
  // Every pass shape: unrolled with a register cache, strided from shared memory or re-read,
  // a row per warp and per block, a row split across blocks.
  auto planned = [&](const std::string& what) { return shifted.count(what) ? shifted.at(what) : 0; };
  EXPECT_GT(planned("warp-per-row / registers") + planned("subwarp-per-row / registers"), 0);
  EXPECT_GT(planned("block-per-row / registers"), 0);
  EXPECT_GT(planned("block-per-row / shared"), 0);
  EXPECT_GT(planned("split-row / shared") + planned("split-row / registers"), 0);
  int reread = 0;
  for (const auto& [what, count] : shifted) reread += what.find("re-read") != std::string::npos ? count : 0;
  EXPECT_GT(reread, 0);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
