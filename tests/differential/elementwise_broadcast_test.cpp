// Elementwise kernels whose operands are broadcast to every element: a bias along the rows,
// a scale per row, a [T, C] table and a [B, 1, C] gate over [B, T, C], a broadcast of a value
// computed from another broadcast, at inner widths that are and are not a multiple of the
// vector, in every float dtype and mixed dtypes (a bf16 bias on f32 rows reads 8-byte
// vectors). The vector steps read such operands as vectors (or one load for all lanes);
// run on the host backend in both thread orders against the reference evaluator.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"

namespace fstitch::testing {
namespace {

ValueId as_f32(Graph& g, ValueId v) {
  return g.node(v).dtype == DType::kF32 ? v : build_cast(g, v, DType::kF32);
}

// y = (x * scale[b, t] + table[t, c] + broadcast(bias[c] + shift[t, c])) * gate[b, c], with x
// of `dtype` and the operands of `operand_dtype`, stored at `dtype`.
Graph broadcast_mix(int64_t b, int64_t t, int64_t c, DType dtype, DType operand_dtype) {
  Graph g;
  const Dims dims = {b, t, c};
  const ValueId x = as_f32(g, build_input(g, "x", dtype, dims));
  const ValueId scale = as_f32(g, build_input(g, "scale", operand_dtype, {b, t, 1}));
  const ValueId table = as_f32(g, build_input(g, "table", operand_dtype, {t, c}));
  const ValueId bias = as_f32(g, build_input(g, "bias", operand_dtype, {c}));
  const ValueId shift = as_f32(g, build_input(g, "shift", operand_dtype, {t, c}));
  const ValueId gate = as_f32(g, build_input(g, "gate", operand_dtype, {b, 1, c}));
  const ValueId shifted = build_binary(g, OpKind::kAdd, build_broadcast(g, bias, {t, c}), shift);
  ValueId y = build_binary(g, OpKind::kMul, x, build_broadcast(g, scale, dims));
  y = build_binary(g, OpKind::kAdd, y, build_broadcast(g, table, dims));
  y = build_binary(g, OpKind::kAdd, y, build_broadcast(g, shifted, dims));
  y = build_binary(g, OpKind::kMul, y, build_broadcast(g, gate, dims));
  build_output(g, "y", dtype == DType::kF32 ? y : build_cast(g, y, dtype));
  return g;
}

TEST(ElementwiseBroadcast, OperandsBroadcastToEveryElement) {
  std::vector<DiffCase> cases;
  uint64_t seed = 7000;
  auto add = [&](const std::string& label, Graph graph) {
    DiffCase c;
    c.label = label;
    c.reproduce = "fstitch_differential_tests --gtest_filter=ElementwiseBroadcast.*";
    c.graph = std::make_shared<const Graph>(std::move(graph));
    c.data_seed = ++seed;
    cases.push_back(std::move(c));
  };
  const std::vector<std::pair<int64_t, int64_t>> rows_cols = {
      {1, 8}, {3, 1000}, {100, 768}, {7, 1001}, {40, 4096}};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const auto& [rows, cols] : rows_cols) {
      add("gelu_bias " + std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(t),
          gelu_bias(rows, cols, t));
    }
  }
  struct Mix {
    int64_t b, t, c;
    DType dtype, operand_dtype;
  };
  const Mix mixes[] = {
      {2, 5, 64, DType::kF32, DType::kF32},  {3, 4, 24, DType::kBF16, DType::kBF16},
      {2, 3, 40, DType::kF32, DType::kBF16}, {2, 7, 12, DType::kF16, DType::kF32},
      {4, 2, 9, DType::kBF16, DType::kBF16}, {1, 1, 16, DType::kF16, DType::kF16},
      {3, 6, 100, DType::kF32, DType::kF16},
  };
  for (const Mix& m : mixes) {
    add("broadcast_mix [" + std::to_string(m.b) + "," + std::to_string(m.t) + "," + std::to_string(m.c) +
            "] " + dtype_name(m.dtype) + " operands " + dtype_name(m.operand_dtype),
        broadcast_mix(m.b, m.t, m.c, m.dtype, m.operand_dtype));
  }
  // The vector steps read the broadcast operands as vectors wherever the lanes allow.
  size_t vector_reads = 0;
  for (const DiffCase& c : cases) {
    const FusionPlan p = plan_fusion(*c.graph, FusionOptions{});
    for (const PlannedKernel& k : p.kernels) {
      ASSERT_EQ(k.spec.schedule, ScheduleKind::kElementwise) << c.label;
      if (emit_kernel(*c.graph, k).find(" wb") != std::string::npos) ++vector_reads;
    }
  }
  // All but five: gelu_bias 7x1001 in three dtypes, [2,7,12] and [4,2,9] at 8 lanes, whose
  // inner widths are not a multiple of the vector.
  EXPECT_EQ(vector_reads, cases.size() - 5);
  for (const CaseResult& r : run_cases(cases, harness_options_from_env())) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
