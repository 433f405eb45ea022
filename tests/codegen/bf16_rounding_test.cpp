// How a kernel rounds its bf16 results: an add, subtract or multiply (one f32 instruction,
// whose NaN the GPU gives canonical bits) by the conversion alone; every other operation, whose
// NaN may carry an operand's payload, with the rule that keeps it. Both compile for sm_80
// and sm_90, and the host backend runs the same text.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "ir/builder.hpp"
#include "jit/kernel_cache.hpp"
#include "plan/plan.hpp"

namespace fstitch {
namespace {

// How value v's definitions round: counts of each rounding function among them.
struct Roundings {
  int arithmetic = 0;  // fst_round_bf16_arith
  int with_rule = 0;   // fst_round_bf16
};

Roundings roundings_of(const std::string& text, ValueId v) {
  Roundings r;
  const std::regex definition("const float v" + std::to_string(v) + "_[0-9]+ = (fst_round_bf16(_arith)?)\\(");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), definition); it != std::sregex_iterator();
       ++it)
    ++((*it)[2].matched ? r.arithmetic : r.with_rule);
  return r;
}

TEST(Bf16Rounding, ArithmeticRoundsWithTheConversionAloneAndTheRestKeepTheNanRule) {
  Graph g;
  const Dims dims{64, 256};
  const ValueId x = build_input(g, "x", DType::kBF16, dims);
  const ValueId y = build_input(g, "y", DType::kBF16, dims);
  const ValueId w = build_input(g, "w", DType::kF32, dims);
  const ValueId sum = build_binary(g, OpKind::kAdd, x, y);
  const ValueId difference = build_binary(g, OpKind::kSub, sum, y);
  const ValueId product = build_binary(g, OpKind::kMul, difference, x);
  const ValueId quotient = build_binary(g, OpKind::kDiv, product, y);
  const ValueId negated = build_unary(g, OpKind::kNeg, quotient);
  const ValueId larger = build_binary(g, OpKind::kMax, negated, x);
  const ValueId cast = build_cast(g, w, DType::kBF16);
  const ValueId out = build_binary(g, OpKind::kAdd, larger, cast);
  build_output(g, "out", out);

  for (int sm : {80, 90}) {
    SCOPED_TRACE("sm_" + std::to_string(sm));
    FusionOptions o;
    o.target_sm = sm;
    const FusionPlan plan = plan_fusion(g, o);
    ASSERT_EQ(plan.kernels.size(), 1u) << dump_plan(g, plan);
    const std::string text = emit_kernel(g, plan.kernels[0]);
    if (std::getenv("FSTITCH_PRINT_KERNEL")) std::printf("%s\n", text.c_str());
    for (ValueId v : {sum, difference, product, out}) {
      const Roundings r = roundings_of(text, v);
      EXPECT_GT(r.arithmetic, 0) << "value " << v << "\n" << text;
      EXPECT_EQ(r.with_rule, 0) << "value " << v;
    }
    for (ValueId v : {quotient, negated, larger, cast}) {
      const Roundings r = roundings_of(text, v);
      EXPECT_GT(r.with_rule, 0) << "value " << v << "\n" << text;
      EXPECT_EQ(r.arithmetic, 0) << "value " << v;
    }

    jit::KernelCache cache(jit::KernelCacheOptions{});
    jit::CompileRequest request;
    request.source = std::string(kernel_prelude()) + text;
    request.name = "bf16_rounding.cu";
    request.arch = sm;
    std::vector<jit::ModulePtr> modules;
    EXPECT_NO_THROW(modules = cache.compile_all({request}));
    ASSERT_EQ(modules.size(), 1u);
    for (const jit::FunctionResources& f : modules[0]->resources) EXPECT_EQ(f.spill_store_bytes, 0) << f.name;
  }
}

}  // namespace
}  // namespace fstitch
