// The planner and the emitter at huge but valid shapes (far larger than any device, so these
// plans are only inspected, never run): byte numbers are exact, totals that would not fit
// are out-of-memory errors instead of wrapped values, and kernels index in 64 bits.
#include <gtest/gtest.h>

#include <string>

#include "codegen/emit.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

constexpr int64_t kTwoTo40 = int64_t{1} << 40;
constexpr int64_t kTwoTo62 = int64_t{1} << 62;

FusionPlan plan_stitch(const Graph& g) {
  return plan_fusion(g, FusionOptions{});
}

Error fuse_error(const Graph& g) {
  try {
    plan_stitch(g);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the graph fused";
  return Error(StatusCode::kOk, "");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HugeShapes, ElementwiseOverTwoTo40ElementsHasExactBytes) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {kTwoTo40});
  build_output(g, "y", build_unary(g, OpKind::kExp, x));
  const FusionPlan p = plan_stitch(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  const uint64_t value = uint64_t{4} << 40;  // f32[2^40]: 4 TiB
  EXPECT_EQ(p.kernels[0].spec.bytes_read, value);
  EXPECT_EQ(p.kernels[0].spec.bytes_written, value);
  EXPECT_EQ(p.planned_bytes, 2 * value);
  EXPECT_EQ(p.lower_bound_bytes, 2 * value);
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_GT(p.est_seconds, 1.0);  // 8 TiB at a few TB/s
}

TEST(HugeShapes, KernelsBeyondTwoTo31ElementsIndexIn64Bits) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {int64_t{1} << 20, (int64_t{1} << 12) + 3});
  ValueId e = build_unary(g, OpKind::kExp, x);
  build_output(g, "y", build_unary(g, OpKind::kNeg, e));
  build_output(g, "s", build_reduce(g, OpKind::kReduceSum, e, {1}, false));
  const FusionPlan p = plan_stitch(g);
  ASSERT_FALSE(p.kernels.empty());
  for (const PlannedKernel& k : p.kernels) {
    const std::string source = emit_kernel(g, k);
    SCOPED_TRACE(source);
    // Every index of the domain, its rows and its columns is a long long.
    EXPECT_FALSE(contains(source, "int f ")) << "32-bit element index";
    EXPECT_FALSE(contains(source, "int row")) << "32-bit row index";
    EXPECT_FALSE(contains(source, "int c ")) << "32-bit column index";
    if (k.spec.reduced_axes.empty()) {
      EXPECT_TRUE(contains(source, "const long long n = 4297064448LL;"));
      EXPECT_TRUE(contains(source, "for (long long f = "));
    } else {
      EXPECT_TRUE(contains(source, "const long long row = "));
      EXPECT_TRUE(contains(source, "long long c = "));
    }
  }
}

// A column reduction (thread per row) over 2^32 + 1 rows of a value needed by two passes:
// the per-thread element count does not fit in 32 bits, so the value cannot be cached in a
// handful of registers and the row loop covers every element.
TEST(HugeShapes, ElementsPerThreadBeyondTwoTo32AreNotTruncated) {
  const int64_t rows = (int64_t{1} << 32) + 1;
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {rows, 2});
  ValueId m = build_reduce(g, OpKind::kReduceMax, x, {0}, true);
  ValueId d = build_binary(g, OpKind::kSub, x, m);
  const ValueId e = build_unary(g, OpKind::kExp, d);
  const ValueId sum = build_reduce(g, OpKind::kReduceSum, e, {0}, false);
  build_output(g, "s", sum);
  // The two-level column kernel as one candidate, without the shared memory a column tile's
  // block combine needs (with it, the planner prefers a column tile over several passes).
  PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, *arch_params(90));
  in.shared_budget = 64;
  PlannedKernel k;
  k.name = "fst_k0";
  Rejection why;
  ASSERT_TRUE(analyze_kernel(in, {m, g.node(d).operands[1], d, e, sum}, &k.spec, &why)) << why.reason;
  for (ValueId v : k.spec.loaded) k.params.push_back({ParamKind::kInput, 0, v, false});
  for (ValueId v : k.spec.stored) k.params.push_back({ParamKind::kOutput, 0, v, true});
  const KernelSpec& s = k.spec;
  EXPECT_EQ(s.schedule, ScheduleKind::kThreadPerRow);
  EXPECT_EQ(s.cols, rows);
  EXPECT_EQ(s.elems_per_thread, rows);
  EXPECT_EQ(s.cache, RowCache::kRecompute);
  const std::string source = emit_kernel(g, k);
  EXPECT_TRUE(contains(source, "c < 4294967297LL")) << source;
  EXPECT_FALSE(contains(source, "for (int j = 0;")) << source;
}

// Opaque results keep workspace slots of their own: four of 2^62 bytes would total 2^64.
TEST(HugeShapes, AWorkspaceBeyondTwoTo62BytesIsOutOfMemory) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kU8, {1});
  for (int i = 0; i < 4; ++i) {
    ValueId big = build_opaque(g, "fill" + std::to_string(i), {x}, DType::kU8, {kTwoTo62});
    build_output(g, "y" + std::to_string(i), build_reduce(g, OpKind::kReduceMax, big, {0}, false));
  }
  const Error e = fuse_error(g);
  EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(e.what(), "the workspace would need more than 2^62 bytes")) << e.what();
}

TEST(HugeShapes, OneValueOfTwoTo62BytesHasAWorkspaceSlot) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kU8, {1});
  ValueId big = build_opaque(g, "fill", {x}, DType::kU8, {kTwoTo62});
  build_output(g, "y", build_reduce(g, OpKind::kReduceMax, big, {0}, false));
  const FusionPlan p = plan_stitch(g);
  EXPECT_EQ(p.workspace_bytes, static_cast<size_t>(kTwoTo62));
}

// Four inputs of 2^62 bytes each: the bytes the plan must move total 2^64 and more.
TEST(HugeShapes, TrafficBeyondTwoTo64BytesIsOutOfMemory) {
  Graph g;
  for (int i = 0; i < 4; ++i) {
    ValueId x = build_input(g, "x" + std::to_string(i), DType::kU8, {kTwoTo62});
    build_output(g, "y" + std::to_string(i), build_reduce(g, OpKind::kReduceMax, x, {0}, false));
  }
  const Error e = fuse_error(g);
  EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(e.what(), "more than 2^64 bytes")) << e.what();
}

// A value of 2^62 bytes written to four outputs: the copy kernel's written bytes overflow.
TEST(HugeShapes, AnInputCopiedToManyOutputsCannotWrapItsWrittenBytes) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kU8, {kTwoTo62});
  for (int i = 0; i < 4; ++i) build_output(g, "y" + std::to_string(i), x);
  EXPECT_EQ(fuse_error(g).code(), StatusCode::kOutOfMemory);
}

}  // namespace
}  // namespace fstitch
