// Permutes after a reduction: a softmax or a LayerNorm whose result is handed on with its axes
// reordered (attention's [B, S, H, D] to [B, H, S, D], a transpose of the reduced axis) is
// one kernel, each element written at its index in the permuted shape. Run on the host
// backend in both thread orders (or on a GPU) against the reference evaluator, with the
// plans' properties checked.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "differential/harness.hpp"
#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

enum class Normalization { kSoftmax, kLayerNorm };

// y = permute(normalize(x) over the last axis, perm); `also_plain` outputs normalize(x) too.
Graph normalized_then_permuted(const Dims& dims, const std::vector<int64_t>& perm, Normalization kind,
                               DType dtype, bool also_plain) {
  Graph g;
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  const ValueId x = build_input(g, "x", dtype, dims);
  ValueId y;
  if (kind == Normalization::kSoftmax) {
    const ValueId m = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, x, {last}, true), dims);
    const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, x, m));
    const ValueId s = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {last}, true), dims);
    y = build_binary(g, OpKind::kDiv, e, s);
  } else {
    const ValueId mean = build_broadcast(g, build_reduce(g, OpKind::kReduceMean, x, {last}, true), dims);
    const ValueId xc = build_binary(g, OpKind::kSub, x, mean);
    Dims row = dims;
    row.back() = 1;
    const ValueId var =
        build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), {last}, true);
    const ValueId rstd = build_unary(
        g, OpKind::kRsqrt,
        build_binary(g, OpKind::kAdd, var, build_broadcast(g, build_constant_f64(g, dtype, 1e-5), row)));
    Dims gamma_dims(dims.size(), 1);
    gamma_dims.back() = dims.back();
    const ValueId gamma = build_input(g, "gamma", dtype, gamma_dims);
    y = build_binary(g, OpKind::kMul, build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, dims)),
                     build_broadcast(g, gamma, dims));
  }
  build_output(g, "y_permuted", build_permute(g, y, perm));
  if (also_plain) build_output(g, "y", y);
  return g;
}

TEST(Differential, PermutesAfterAReductionAreWrittenThroughTheirIndexMap) {
  struct Case {
    Dims dims;
    std::vector<int64_t> perm;
    const char* what;
  };
  const Case shapes[] = {
      {{2, 24, 4, 64}, {0, 2, 1, 3}, "heads moved ahead of the sequence"},
      {{3, 40, 72}, {0, 2, 1}, "the reduced axis transposed out"},
      {{5, 7, 33}, {2, 1, 0}, "every axis reversed, rows of an odd length"},
      {{4, 32000}, {1, 0}, "a few long rows transposed (split across blocks)"},
  };
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9700;
  for (const Case& shape : shapes) {
    for (Normalization kind : {Normalization::kSoftmax, Normalization::kLayerNorm}) {
      for (DType dtype : {DType::kF32, DType::kBF16}) {
        for (bool also_plain : {false, true}) {
          auto graph = std::make_shared<const Graph>(
              normalized_then_permuted(shape.dims, shape.perm, kind, dtype, also_plain));
          const std::string label = std::string(kind == Normalization::kSoftmax ? "softmax" : "layer_norm") +
                                    " " + dims_to_string(shape.dims) + " " + shape.what + " " +
                                    dtype_name(dtype) + (also_plain ? " (and unpermuted)" : "");
          const FusionPlan p = plan_fusion(*graph, FusionOptions{});
          EXPECT_EQ(p.kernels.size(), 1u) << label << "\n" << dump_plan(*graph, p);
          EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << label << "\n" << dump_plan(*graph, p);
          DiffCase c;
          c.label = label;
          c.reproduce = "fstitch_differential_tests --gtest_filter=Differential.PermutesAfterAReduction*";
          c.graph = graph;
          c.data_seed = ++data_seed;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
