// The text of a row kernel: a bf16 LayerNorm [8192, 4096] reads and writes its rows as
// 16-byte vectors, reads gamma and beta at the column (no division of the flat index),
// indexes in 32 bits, converts with the hardware instruction, and compiles for sm_90 without
// spills.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "jit/kernel_cache.hpp"
#include "plan/plan.hpp"

namespace fstitch {
namespace {

PlannedKernel only_kernel(const Graph& g, int sm, FusionPlan* storage) {
  FusionOptions o;
  o.target_sm = sm;
  *storage = plan_fusion(g, o);
  EXPECT_EQ(storage->kernels.size(), 1u);
  return storage->kernels.at(0);
}

TEST(RowAccess, Bf16LayerNormUsesVectorsColumnsAnd32BitIndices) {
  const Graph g = testing::layer_norm(8192, 4096, DType::kBF16);
  FusionPlan plan;
  const PlannedKernel k = only_kernel(g, 90, &plan);
  const std::string text = emit_kernel(g, k);
  if (std::getenv("FSTITCH_PRINT_KERNEL")) std::printf("%s\n", text.c_str());
  EXPECT_EQ(k.spec.vector_width, 8);
  EXPECT_NE(text.find("*reinterpret_cast<const uint4*>"), std::string::npos) << text;
  EXPECT_NE(text.find("*reinterpret_cast<uint4*>"), std::string::npos) << text;
  EXPECT_EQ(text.find("% 4096LL"), std::string::npos) << text;
  // The element and row indices are int; only the grid-stride row loop counts in 64 bits.
  EXPECT_NE(text.find("const int f = "), std::string::npos) << text;
  EXPECT_NE(text.find("const int row = "), std::string::npos) << text;
  EXPECT_EQ(text.find("long long c"), std::string::npos) << text;
  EXPECT_EQ(text.find("long long f"), std::string::npos) << text;
  EXPECT_EQ(text.find("4096LL"), std::string::npos) << text;
  // Full tiles: no per-element column guard.
  EXPECT_EQ(text.find("c < 4096"), std::string::npos) << text;
}

// The 16-bit results of bf16 LayerNorm and GELU(x + bias) are stored from their f32: two
// lanes per cvt, one test of the vector's lanes for a NaN, and no rounding in place first.
TEST(RowAccess, Bf16StoresConvertTwoLanesPerCvt) {
  for (const auto& [name, g] :
       {std::pair<const char*, Graph>{"layer_norm", testing::layer_norm(8192, 4096, DType::kBF16)},
        {"gelu_bias", testing::gelu_bias(8192, 4096, DType::kBF16)}}) {
    SCOPED_TRACE(name);
    FusionPlan plan;
    const PlannedKernel k = only_kernel(g, 90, &plan);
    const std::string text = emit_kernel(g, k);
    EXPECT_NE(text.find("= fst_cvt_bf16x2("), std::string::npos) << text;
    EXPECT_NE(text.find("if (__builtin_expect("), std::string::npos) << text;
    EXPECT_EQ(text.find("fst_bf16_bits("), std::string::npos) << text;
  }
}

// A row of 4097 bf16 elements is not a whole number of vectors: each row's head and tail
// move one element at a time and the vectors between them whole, from the row's first
// 16-byte boundary; gamma and beta, whose vectors do not line up with the row's, are read at
// the column one element at a time, with no division of the flat index.
TEST(RowAccess, OddColumnsMoveInShiftedVectors) {
  const Graph g = testing::layer_norm(100, 4097, DType::kBF16);
  FusionPlan plan;
  const PlannedKernel k = only_kernel(g, 90, &plan);
  const std::string text = emit_kernel(g, k);
  EXPECT_EQ(k.spec.vector_width, 8);
  EXPECT_EQ(k.spec.row_alignment, RowVectorAlignment::kShifted);
  EXPECT_NE(text.find("const int rs_shift = (row * 4097) % 8;"), std::string::npos) << text;
  EXPECT_NE(text.find("e < rs_edges"), std::string::npos) << text;
  EXPECT_NE(text.find("*reinterpret_cast<const uint4*>(p0 + fb)"), std::string::npos) << text;
  EXPECT_NE(text.find("*reinterpret_cast<uint4*>"), std::string::npos) << text;
  EXPECT_EQ(text.find("*reinterpret_cast<const uint4*>(p1"), std::string::npos) << text;  // gamma
  EXPECT_NE(text.find("p1[cb + 0]"), std::string::npos) << text;
  EXPECT_EQ(text.find("% 4097"), std::string::npos) << text;
}

// Rows shorter than two vectors (7 bf16 columns) could have no whole vector: scalar
// accesses with a guarded tail step.
TEST(RowAccess, RowsShorterThanTwoVectorsStayScalar) {
  const Graph g = testing::layer_norm(100, 7, DType::kBF16);
  FusionPlan plan;
  const PlannedKernel k = only_kernel(g, 90, &plan);
  const std::string text = emit_kernel(g, k);
  EXPECT_EQ(k.spec.vector_width, 1);
  EXPECT_EQ(text.find("uint4"), std::string::npos) << text;
  EXPECT_EQ(text.find("% 7"), std::string::npos) << text;
}

// GroupNorm reads its input [N, C, HW] through the reshape to [N, G, C/G x HW]: a reshape
// keeps the flat index, so the input moves in the row's 16-byte vectors like a value of the
// kernel's own dims (one element at a time, it read a quarter of what the stores write per
// instruction).
TEST(RowAccess, ValuesReadThroughAReshapeMoveInVectors) {
  for (DType t : {DType::kBF16, DType::kF32}) {
    SCOPED_TRACE(dtype_name(t));
    const Graph g = testing::group_norm({8, 512, 4096, 32}, t);
    FusionPlan plan;
    const PlannedKernel k = only_kernel(g, 90, &plan);
    const std::string text = emit_kernel(g, k);
    ASSERT_GT(k.spec.vector_width, 1);
    ASSERT_NE(g.node(g.inputs().at(0)).dims, k.spec.domain);
    EXPECT_NE(text.find("*reinterpret_cast<const uint4*>(p0 + fb)"), std::string::npos) << text;
    EXPECT_EQ(text.find("(p0[f])"), std::string::npos) << text;
  }
}

TEST(RowAccess, Bf16LayerNormCompilesForSm90WithoutSpills) {
  const Graph g = testing::layer_norm(8192, 4096, DType::kBF16);
  FusionPlan plan;
  const PlannedKernel k = only_kernel(g, 90, &plan);
  jit::KernelCache cache(jit::KernelCacheOptions{});
  jit::CompileRequest r;
  r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
  r.name = "layer_norm_bf16.cu";
  r.arch = 90;
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache.compile_all({r}));
  ASSERT_EQ(modules.size(), 1u);
  ASSERT_FALSE(modules[0]->resources.empty()) << modules[0]->log;
  for (const jit::FunctionResources& f : modules[0]->resources) {
    std::printf("[ row access ] %s sm_90: %d registers, %lld bytes stack\n", f.name.c_str(), f.registers,
                static_cast<long long>(f.stack_frame_bytes));
    EXPECT_EQ(f.spill_store_bytes, 0) << modules[0]->log;
    EXPECT_EQ(f.spill_load_bytes, 0) << modules[0]->log;
    EXPECT_EQ(f.stack_frame_bytes, 0) << modules[0]->log;
    EXPECT_LE(f.registers, 64) << modules[0]->log;
  }
  // The PTX reads and writes the rows with 16-byte accesses and converts with cvt (NVVM
  // pairs the conversions into cvt.rn.bf16x2.f32).
  EXPECT_NE(modules[0]->ptx.find("ld.global.nc.v4.u32"), std::string::npos) << modules[0]->ptx;
  EXPECT_NE(modules[0]->ptx.find("st.global.v4.u32"), std::string::npos) << modules[0]->ptx;
  EXPECT_NE(modules[0]->ptx.find("cvt.rn.bf16"), std::string::npos) << modules[0]->ptx;
}

}  // namespace
}  // namespace fstitch
