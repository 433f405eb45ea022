// Tensor constants through planning and fused runs on the host backend: kernels load them
// through FST_PARAM_CONSTANT parameters at the fusion's copy of the data, an output that is a
// constant gets a copy kernel, an opaque operation reads the constant where it is, and every
// run matches the reference evaluator. NVRTC compiles the kernels that read constants.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "api/fusion.hpp"
#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/backend_run.hpp"
#include "common/capi_handles.hpp"
#include "jit/kernel_cache.hpp"
#include "ref/evaluator.hpp"

namespace {

using fstitch::testing::ContextHandle;
using fstitch::testing::FusionHandle;
using fstitch::testing::GraphHandle;

struct Case {
  ContextHandle context;
  GraphHandle graph;
};

Case new_case() {
  fst_context* c = nullptr;
  EXPECT_EQ(fst_context_create(nullptr, &c), FST_OK);
  fst_graph* g = nullptr;
  EXPECT_EQ(fst_graph_create(c, &g), FST_OK);
  return {ContextHandle(c), GraphHandle(g)};
}

FusionHandle fuse(fst_graph* g, fst_fusion_policy policy) {
  fst_fuse_options* options = nullptr;
  EXPECT_EQ(fst_fuse_options_create(&options), FST_OK);
  EXPECT_EQ(fst_fuse_options_set_policy(options, policy), FST_OK);
  fst_fusion* f = nullptr;
  EXPECT_EQ(fst_fuse(g, options, &f), FST_OK) << fst_last_error_message();
  fst_fuse_options_destroy(options);
  return FusionHandle(f);
}

// Every output of `f` run fused on the host backend and by the reference evaluator, from the
// same inputs; outputs start as NaN-like bytes so an unwritten element cannot pass.
void expect_fused_matches_reference(const fst_fusion* f, const std::vector<std::vector<uint8_t>>& inputs) {
  const fstitch::Graph& g = f->graph;
  std::vector<std::vector<uint8_t>> fused, ref;
  std::vector<fstitch::testing::HostArray> in_arrays, out_arrays;
  std::vector<const void*> in_ptrs;
  std::vector<void*> ref_ptrs;
  for (const auto& buffer : inputs) {
    in_arrays.push_back({const_cast<uint8_t*>(buffer.data()), buffer.size()});
    in_ptrs.push_back(buffer.data());
  }
  for (const fstitch::GraphOutput& out : g.outputs()) {
    const size_t bytes = fstitch::value_bytes(g, out.value);
    fused.emplace_back(bytes, 0xff);
    ref.emplace_back(bytes, 0xee);
  }
  for (auto& b : fused) out_arrays.push_back({b.data(), b.size()});
  for (auto& b : ref) ref_ptrs.push_back(b.data());
  ASSERT_EQ(fstitch::testing::run_on_backend(f, in_arrays, out_arrays), FST_OK) << fst_last_error_message();
  fstitch::evaluate_reference(g, in_ptrs, ref_ptrs);
  for (size_t j = 0; j < fused.size(); ++j) {
    // The operations here are exact in f32 (products and sums of small binary fractions), so
    // the fused run must agree bit for bit.
    EXPECT_EQ(fused[j], ref[j]) << "output " << g.outputs()[j].name << "\n" << fstitch::dump_plan(g, f->plan);
  }
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// x * cos (a [cols] table broadcast over rows) masked by a bool [rows, cols] constant, its row
// sums, position ids cast to f32 and added, and the table itself as an output.
struct RotaryLike {
  static constexpr int64_t kRows = 6, kCols = 16;
  Case c = new_case();
  std::vector<float> table;
  fst_value cos_table = FST_VALUE_INVALID;

  RotaryLike() {
    fst_graph* g = c.graph.get();
    const int64_t dims[2] = {kRows, kCols};
    for (int64_t k = 0; k < kCols; ++k) table.push_back(0.25f * static_cast<float>(k % 7) - 0.5f);
    std::vector<uint8_t> mask(static_cast<size_t>(kRows * kCols));
    for (size_t k = 0; k < mask.size(); ++k) mask[k] = (k % 3 != 0) ? 1 : 0;
    std::vector<int32_t> positions(static_cast<size_t>(kCols));
    for (int64_t k = 0; k < kCols; ++k) positions[static_cast<size_t>(k)] = static_cast<int32_t>(k - 3);

    fst_value x = fst_input(g, "x", FST_F32, 2, dims);
    cos_table = fst_constant_tensor(g, FST_F32, 1, &dims[1], table.data(), table.size() * sizeof(float));
    fst_value m = fst_constant_tensor(g, FST_BOOL, 2, dims, mask.data(), mask.size());
    fst_value pos = fst_constant_tensor(g, FST_I32, 1, &dims[1], positions.data(), positions.size() * 4);
    fst_value rotated = fst_binary(g, FST_BINARY_MUL, x, cos_table);
    fst_value masked = fst_select(g, m, rotated, fst_constant_f64(g, FST_F32, 0.0));
    fst_value shifted = fst_binary(g, FST_BINARY_ADD, masked, fst_cast(g, pos, FST_F32));
    const int64_t axis[1] = {1};
    EXPECT_EQ(fst_output(g, "y", shifted), FST_OK);
    EXPECT_EQ(fst_output(g, "row_sum", fst_reduce(g, FST_REDUCE_SUM, masked, 1, axis, 0)), FST_OK);
    EXPECT_EQ(fst_output(g, "table", cos_table), FST_OK);
    EXPECT_EQ(fst_graph_status(g), FST_OK) << fst_graph_error_message(g);
  }

  std::vector<uint8_t> input() const {
    std::vector<float> x(static_cast<size_t>(kRows * kCols));
    for (size_t k = 0; k < x.size(); ++k) x[k] = 0.125f * static_cast<float>(static_cast<int>(k % 11) - 5);
    return bytes_of(x);
  }
};

TEST(TensorConstantRun, KernelsLoadConstantsThroughConstantParameters) {
  RotaryLike r;
  FusionHandle f = fuse(r.c.graph.get(), FST_POLICY_STITCH);
  ASSERT_TRUE(f);
  const fstitch::FusionPlan& plan = f->plan;
  ASSERT_EQ(plan.constants.size(), 3u);  // table, mask, positions, in graph order
  EXPECT_LT(plan.constants[0], plan.constants[1]);
  EXPECT_LT(plan.constants[1], plan.constants[2]);
  size_t constant_params = 0;
  for (const fstitch::PlannedKernel& k : plan.kernels) {
    for (const fstitch::KernelParam& p : k.params) {
      if (p.kind != fstitch::ParamKind::kConstant) continue;
      ++constant_params;
      EXPECT_FALSE(p.written);
      ASSERT_LT(p.index, plan.constants.size());
      EXPECT_EQ(p.value, plan.constants[p.index]);
    }
    // No kernel computes a constant: it is in memory before the run.
    for (fstitch::ValueId v : k.spec.members) EXPECT_NE(f->graph.node(v).op, fstitch::OpKind::kTensor);
  }
  EXPECT_GE(constant_params, 3u);  // each constant is read, the table by the copy to its output too
  // The plan dump names the constant locations.
  EXPECT_NE(fstitch::dump_plan(f->graph, plan).find("(constant 0)"), std::string::npos);

  // The C API reports the same constants, with the fusion's copy of the data.
  size_t count = 0;
  ASSERT_EQ(fst_fusion_constant_count(f.get(), &count), FST_OK);
  EXPECT_EQ(count, 3u);
  const void* data = nullptr;
  size_t bytes = 0;
  fst_value value = FST_VALUE_INVALID;
  ASSERT_EQ(fst_fusion_constant(f.get(), 0, &data, &bytes, &value), FST_OK);
  EXPECT_EQ(bytes, r.table.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(data, r.table.data(), bytes), 0);
  EXPECT_NE(data, static_cast<const void*>(r.table.data()));  // copied at build time
  EXPECT_EQ(value, r.cos_table);
}

TEST(TensorConstantRun, FusedRunsMatchTheReferenceUnderEveryPolicy) {
  for (fst_fusion_policy policy : {FST_POLICY_STITCH, FST_POLICY_LOOP, FST_POLICY_NONE}) {
    SCOPED_TRACE("policy " + std::to_string(static_cast<int>(policy)));
    RotaryLike r;
    FusionHandle f = fuse(r.c.graph.get(), policy);
    ASSERT_TRUE(f);
    expect_fused_matches_reference(f.get(), {r.input()});
  }
}

TEST(TensorConstantRun, TheDataIsTheFusionsOwnCopy) {
  RotaryLike r;
  FusionHandle f = fuse(r.c.graph.get(), FST_POLICY_STITCH);
  ASSERT_TRUE(f);
  // Neither the caller's buffer nor the graph matter once the constant is built.
  std::fill(r.table.begin(), r.table.end(), 1e6f);
  r.c.graph.reset();
  expect_fused_matches_reference(f.get(), {r.input()});
}

TEST(TensorConstantRun, AReshapedConstantOutputIsCopiedByAKernel) {
  Case c = new_case();
  fst_graph* g = c.graph.get();
  const std::vector<uint16_t> halves{0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000};  // f16
  const int64_t dims[2] = {2, 3}, flat[1] = {6};
  fst_value h = fst_constant_tensor(g, FST_F16, 2, dims, halves.data(), halves.size() * 2);
  ASSERT_EQ(fst_output(g, "flat", fst_reshape(g, h, 1, flat)), FST_OK);
  ASSERT_EQ(fst_output(g, "same", h), FST_OK);
  FusionHandle f = fuse(g, FST_POLICY_STITCH);
  ASSERT_TRUE(f);
  expect_fused_matches_reference(f.get(), {});
}

// An opaque operation reads a constant where the fusion keeps it: no kernel copies it first.
struct Identity {
  const void* seen_operand = nullptr;
  static fst_status run(const fst_opaque_call* call, void* user_data) {
    const void* in = nullptr;
    void* out = nullptr;
    fst_dtype dtype = FST_F32;
    size_t rank = 0;
    const int64_t* dims = nullptr;
    if (fst_opaque_call_operand(call, 0, &in, &dtype, &rank, &dims) != FST_OK) return FST_ERROR_INTERNAL;
    if (fst_opaque_call_result(call, &out, &dtype, &rank, &dims) != FST_OK) return FST_ERROR_INTERNAL;
    size_t elements = 1;
    for (size_t d = 0; d < rank; ++d) elements *= static_cast<size_t>(dims[d]);
    std::memcpy(out, in, elements * fst_dtype_size(dtype));
    static_cast<Identity*>(user_data)->seen_operand = in;
    return FST_OK;
  }
};

TEST(TensorConstantRun, AnOpaqueOperationReadsTheConstantInPlace) {
  Case c = new_case();
  fst_graph* g = c.graph.get();
  const int64_t dims[2] = {4, 8};
  std::vector<float> weights(32);
  for (size_t k = 0; k < weights.size(); ++k) weights[k] = 0.5f * static_cast<float>(k);
  fst_value x = fst_input(g, "x", FST_F32, 2, dims);
  fst_value w = fst_constant_tensor(g, FST_F32, 2, dims, weights.data(), weights.size() * 4);
  fst_value op = fst_opaque(g, "identity", 1, &w, FST_F32, 2, dims);
  ASSERT_EQ(fst_output(g, "y", fst_binary(g, FST_BINARY_ADD, x, op)), FST_OK);
  FusionHandle f = fuse(g, FST_POLICY_STITCH);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->plan.opaque_steps.size(), 1u);
  EXPECT_EQ(f->plan.opaque_steps[0].operands[0].kind, fstitch::ParamKind::kConstant);
  for (const fstitch::PlannedKernel& k : f->plan.kernels) {
    for (const fstitch::KernelParam& p : k.params) EXPECT_FALSE(p.written && p.value == f->plan.constants[0]);
  }
  std::vector<float> xs(32, 1.0f), ys(32, NAN);
  const void* inputs[1] = {xs.data()};
  void* outputs[1] = {ys.data()};
  Identity identity;
  ASSERT_EQ(
      fst_fusion_run_with_opaque(f.get(), inputs, 1, outputs, 1, nullptr, nullptr, Identity::run, &identity),
      FST_OK)
      << fst_last_error_message();
  EXPECT_EQ(identity.seen_operand, f->host_constants[0]);
  for (size_t k = 0; k < ys.size(); ++k) EXPECT_EQ(ys[k], 1.0f + weights[k]) << k;
}

TEST(TensorConstantRun, KernelsReadingConstantsCompileWithNvrtc) {
  RotaryLike r;
  FusionHandle f = fuse(r.c.graph.get(), FST_POLICY_STITCH);
  ASSERT_TRUE(f);
  fstitch::jit::KernelCache cache(fstitch::jit::KernelCacheOptions{});  // memory only
  std::vector<fstitch::jit::CompileRequest> requests;
  for (const fstitch::PlannedKernel& k : f->plan.kernels) {
    for (int sm : {80, 90}) {
      fstitch::jit::CompileRequest request;
      request.source = std::string(fstitch::kernel_prelude()) + fstitch::emit_kernel(f->graph, k);
      request.name = k.name + ".cu";
      request.arch = sm;
      requests.push_back(request);
    }
  }
  std::vector<fstitch::jit::ModulePtr> modules;
  try {
    modules = cache.compile_all(requests);
  } catch (const fstitch::Error& e) {
    if (e.code() == fstitch::StatusCode::kNoCompiler) GTEST_SKIP() << e.what();
    FAIL() << e.what();
  }
  ASSERT_EQ(modules.size(), requests.size());
  for (const auto& m : modules) EXPECT_FALSE(m->ptx.empty());
}

}  // namespace
