// Reductions over a reshaped view: GroupNorm's statistics over [N, G, C/G x HW] and its
// affine over [N, C, HW] are one row kernel, the reshape an index map (a reshape keeps each
// element's flat index). Run on the host backend in both thread orders (or on a GPU) against
// the reference evaluator, with the plan's properties checked.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "differential/harness.hpp"
#include "ir/builder.hpp"

namespace fstitch::testing {
namespace {

struct GroupNormShape {
  int64_t n, c, hw, groups;
};

// y = GroupNorm(x) * gamma + beta (+ residual), x [N, C, HW]; `stats` also outputs the
// groups' mean [N, G, 1].
Graph group_norm(const GroupNormShape& s, DType dtype, bool residual, bool stats) {
  Graph g;
  const Dims dims = {s.n, s.c, s.hw};
  const Dims view = {s.n, s.groups, s.c / s.groups * s.hw};
  const ValueId x = build_input(g, "x", dtype, dims);
  const ValueId gamma = build_input(g, "gamma", dtype, {s.c, 1});
  const ValueId beta = build_input(g, "beta", dtype, {s.c, 1});
  const ValueId xv = build_reshape(g, x, view);
  const ValueId mean = build_reduce(g, OpKind::kReduceMean, xv, {2}, true);
  const ValueId xc = build_binary(g, OpKind::kSub, xv, build_broadcast(g, mean, view));
  const ValueId var = build_reduce(g, OpKind::kReduceMean, build_binary(g, OpKind::kMul, xc, xc), {2}, true);
  const ValueId eps = build_broadcast(g, build_constant_f64(g, dtype, 1e-5), {s.n, s.groups, 1});
  const ValueId rstd = build_unary(g, OpKind::kRsqrt, build_binary(g, OpKind::kAdd, var, eps));
  const ValueId xhat =
      build_reshape(g, build_binary(g, OpKind::kMul, xc, build_broadcast(g, rstd, view)), dims);
  ValueId y =
      build_binary(g, OpKind::kAdd, build_binary(g, OpKind::kMul, xhat, build_broadcast(g, gamma, dims)),
                   build_broadcast(g, beta, dims));
  if (residual) y = build_binary(g, OpKind::kAdd, y, build_input(g, "residual", dtype, dims));
  build_output(g, "y", y);
  if (stats) build_output(g, "mean", mean);
  return g;
}

TEST(Differential, GroupNormIsOneKernelThroughItsReshapes) {
  const GroupNormShape shapes[] = {{4, 64, 48, 8}, {2, 32, 49, 4}, {3, 6, 17, 3}, {1, 128, 1024, 32}};
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9300;
  for (const GroupNormShape& s : shapes) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      for (int variant = 0; variant < 2; ++variant) {
        const bool residual = variant == 1, stats = variant == 1;
        auto graph = std::make_shared<const Graph>(group_norm(s, dtype, residual, stats));
        const std::string label = "group_norm [" + std::to_string(s.n) + ", " + std::to_string(s.c) + ", " +
                                  std::to_string(s.hw) + "] groups " + std::to_string(s.groups) + " " +
                                  dtype_name(dtype) + (residual ? " + residual, mean" : "");
        const FusionPlan p = plan_fusion(*graph, FusionOptions{});
        EXPECT_EQ(p.kernels.size(), 1u) << label << "\n" << dump_plan(*graph, p);
        EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << label;
        DiffCase c;
        c.label = label;
        c.reproduce =
            "fstitch_differential_tests --gtest_filter=Differential.GroupNormIsOneKernelThroughItsReshapes";
        c.graph = graph;
        c.data_seed = ++data_seed;
        cases.push_back(std::move(c));
      }
    }
  }
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
