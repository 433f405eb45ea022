// The block-wide exchanges of a row kernel (plan/row_exchange.hpp): the reductions a pass
// finishes leave the warps together, behind one block barrier, and the row takes the
// barriers the cost model counts for it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "plan/arch.hpp"
#include "plan/plan.hpp"
#include "plan/row_exchange.hpp"

namespace fstitch {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The body of the kernel's (first) row loop: from its header to the matching brace.
std::string row_loop(const std::string& text) {
  const size_t start = text.find("for (long long row_base");
  if (start == std::string::npos) return "";
  int depth = 0;
  for (size_t i = text.find('{', start); i < text.size(); ++i) {
    depth += text[i] == '{' ? 1 : text[i] == '}' ? -1 : 0;
    if (depth == 0) return text.substr(start, i + 1 - start);
  }
  return "";
}

// LayerNorm backward: the row's mean of x and its mean of dy * gamma are finished by the
// same pass, the variance and the mean of dy * gamma * xhat by one pass each. Three
// exchanges, three barriers and one more at the row's end (an odd count): four per row,
// where two per reduction took eight.
TEST(RowExchange, ReductionsOfOnePassShareOneBarrier) {
  const Graph g = testing::layer_norm_backward(8192, 1024, DType::kF32);
  FusionOptions o;
  o.device = arch_params_for_device("h100");
  const FusionPlan plan = plan_fusion(g, o);
  ASSERT_EQ(plan.kernels.size(), 1u);
  const KernelSpec& s = plan.kernels[0].spec;
  ASSERT_GT(s.threads_per_row, 32);
  const std::string text = emit_kernel(g, plan.kernels[0]);
  if (std::getenv("FSTITCH_PRINT_KERNEL")) std::printf("%s\n", text.c_str());
  const std::string loop = row_loop(text);
  ASSERT_FALSE(loop.empty()) << text;
  EXPECT_EQ(row_exchanges(g, s), 3);
  EXPECT_EQ(row_barriers(g, s), 4);
  EXPECT_EQ(count(loop, "if (lane % 32 == 0) {"), 3u) << loop;
  EXPECT_EQ(count(loop, "__syncthreads();"), 4u) << loop;
  // Both reductions of the first pass shuffle in one loop and take one slot each per warp
  // (eight warps) in the first buffer.
  EXPECT_NE(loop.find("fst_red_f[0 + lane / 32]"), std::string::npos) << loop;
  EXPECT_NE(loop.find("fst_red_f[8 + lane / 32]"), std::string::npos) << loop;
}

// Every row kernel whose rows span several warps takes, per row, the exchanges and barriers
// the model counts: whole rows and split rows, registers, shared memory and re-read rows,
// rows from their start and shifted, on sm_80 and sm_90.
TEST(RowExchange, EveryRowTakesTheBarriersTheModelCounts) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {8192, 4096}, {64, 50257}, {2, 20001}, {1, 1 << 20}, {4096, 1000}};
  int checked = 0, split = 0, odd = 0;
  for (const auto& c : testing::canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        for (int sm : {80, 90}) {
          const Graph g = c.build(rows, cols, t);
          FusionOptions o;
          o.target_sm = sm;
          const FusionPlan plan = plan_fusion(g, o);
          for (const PlannedKernel& k : plan.kernels) {
            const KernelSpec& s = k.spec;
            if (s.threads_per_row <= 32 || s.schedule == ScheduleKind::kColumnTile || s.row_walks != 1)
              continue;
            SCOPED_TRACE(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                         dtype_name(t) + " sm_" + std::to_string(sm));
            const std::string loop = row_loop(emit_kernel(g, k));
            ASSERT_FALSE(loop.empty());
            EXPECT_EQ(count(loop, "if (lane % 32 == 0) {"), static_cast<size_t>(row_exchanges(g, s))) << loop;
            EXPECT_EQ(count(loop, "__syncthreads();"), static_cast<size_t>(row_barriers(g, s))) << loop;
            ++checked;
            split += s.schedule == ScheduleKind::kSplitRow ? 1 : 0;
            odd += row_exchanges(g, s) % 2;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 40);
  EXPECT_GT(split, 10);
  EXPECT_GT(odd, 10);
}

}  // namespace
}  // namespace fstitch
