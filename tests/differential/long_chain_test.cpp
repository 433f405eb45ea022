// Kernels of any size: long elementwise chains and long dependent DAGs are one kernel, emitted
// without recursion per operation, and run on the host backend in both thread orders (or on
// a GPU) matching the reference evaluator.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "plan/cost_model.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch::testing {
namespace {

// y_{i+1} = f_i(y_i) for `ops` operations that keep values in [-2, 2]: a subtraction, a
// scaling, a tanh.
Graph chain(int ops, DType dtype, const Dims& dims) {
  Graph g;
  ValueId y = build_input(g, "x", dtype, dims);
  for (int i = 0; i < ops; ++i) {
    switch (i % 3) {
      case 0:
        y = build_binary(g, OpKind::kSub, y, build_broadcast(g, build_constant_f64(g, dtype, 0.125), dims));
        break;
      case 1:
        y = build_binary(g, OpKind::kMul, y, build_broadcast(g, build_constant_f64(g, dtype, 1.5), dims));
        break;
      default:
        y = build_unary(g, OpKind::kTanh, y);
        break;
    }
  }
  build_output(g, "y", y);
  return g;
}

// y_{i+2} = tanh(y_{i+1} - y_i / 2): every value has two users, so emission meets shared
// operands all along the chain.
Graph ladder(int ops, DType dtype, const Dims& dims) {
  Graph g;
  ValueId a = build_input(g, "x", dtype, dims);
  ValueId b = build_unary(g, OpKind::kTanh, a);
  const ValueId half = build_broadcast(g, build_constant_f64(g, dtype, 0.5), dims);
  for (int i = 0; i < ops; ++i) {
    const ValueId next = build_unary(
        g, OpKind::kTanh, build_binary(g, OpKind::kSub, b, build_binary(g, OpKind::kMul, a, half)));
    a = b;
    b = next;
  }
  build_output(g, "y", b);
  return g;
}

// A row softmax after a long chain and before another: the chain runs inside the row
// kernel's passes.
Graph chain_softmax_chain(int ops, DType dtype) {
  const Dims dims = {24, 96};
  Graph g;
  ValueId y = build_input(g, "x", dtype, dims);
  for (int i = 0; i < ops; ++i) y = build_unary(g, i % 2 ? OpKind::kTanh : OpKind::kNeg, y);
  const ValueId max = build_broadcast(g, build_reduce(g, OpKind::kReduceMax, y, {1}, true), dims);
  const ValueId e = build_unary(g, OpKind::kExp, build_binary(g, OpKind::kSub, y, max));
  const ValueId sum = build_broadcast(g, build_reduce(g, OpKind::kReduceSum, e, {1}, true), dims);
  y = build_binary(g, OpKind::kDiv, e, sum);
  for (int i = 0; i < ops; ++i) y = build_unary(g, i % 2 ? OpKind::kTanh : OpKind::kNeg, y);
  build_output(g, "y", y);
  return g;
}

// Chains far past the search's 64-operation candidates are one kernel at the lower-bound
// bytes; the bf16 chain and ladder (eight lanes per vector step, each value rounded) estimate
// past the code budget and split, each kernel within it, each boundary naming the resource.
// Every plan runs and matches the reference evaluator.
TEST(Differential, LongChainsAreOneKernelWithinTheCodeBudget) {
  struct Built {
    std::string label;
    std::shared_ptr<const Graph> graph;
    bool over_budget = false;  // estimated past the code budget as one kernel
  };
  std::vector<Built> graphs;
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const std::string t = dtype_name(dtype);
    const bool wide_vectors = dtype == DType::kBF16;
    graphs.push_back({"chain 500 [16, 300] " + t, std::make_shared<const Graph>(chain(500, dtype, {16, 300})),
                      wide_vectors});
    graphs.push_back({"ladder 150 [7, 33] " + t, std::make_shared<const Graph>(ladder(150, dtype, {7, 33})),
                      wide_vectors});
    graphs.push_back(
        {"chain 60, softmax, chain 60 " + t, std::make_shared<const Graph>(chain_softmax_chain(60, dtype))});
  }
  std::vector<DiffCase> cases;
  uint64_t data_seed = 9100;
  const PlanInputs defaults;
  for (const Built& b : graphs) {
    FusionOptions o;
    const FusionPlan p = plan_fusion(*b.graph, o);
    if (!b.over_budget) {
      EXPECT_EQ(p.kernels.size(), 1u) << b.label << "\n" << dump_plan(*b.graph, p);
      EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes) << b.label;
    } else {
      EXPECT_GT(p.kernels.size(), 1u) << b.label << "\n" << dump_plan(*b.graph, p);
      for (const Boundary& x : p.boundaries)
        EXPECT_EQ(x.cause, BoundaryCause::kResource) << b.label << ": " << x.reason;
    }
    for (const PlannedKernel& k : p.kernels)
      EXPECT_LE(code_instructions(*b.graph, k.spec), defaults.code_budget) << b.label << " " << k.name;
    DiffCase c;
    c.label = b.label;
    c.reproduce =
        "fstitch_differential_tests --gtest_filter=Differential.LongChainsAreOneKernelWithinTheCodeBudget";
    c.graph = b.graph;
    c.data_seed = ++data_seed;
    cases.push_back(std::move(c));
  }
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace fstitch::testing
