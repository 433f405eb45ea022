// A decoder block built the way a framework lowers one (LLaMA-style): a token embedding
// gathered from a tensor constant, RMSNorm, a fused QKV matmul split three ways, rotary
// embeddings from cos/sin tables (tensor constants gathered by position) with rotate-half
// written as slices and a concat, causal attention and every matmul as opaque operations, a
// free view between attention and the output projection, and a gated MLP. The plan must be
// executable, its fused run through the callback must match the reference through the same
// callback, no kernel may exist only to copy a view, and each region between opaque
// operations must be one kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "api/fusion.hpp"
#include "common/capi_handles.hpp"
#include "common/host_context.hpp"
#include "fstitch.h"
#include "plan/views.hpp"

namespace fstitch {
namespace {

using testing::ContextHandle;
using testing::FusionHandle;
using testing::GraphHandle;

constexpr int64_t kVocab = 32, kTokens = 8, kHeads = 4, kHeadDim = 16, kModel = kHeads * kHeadDim;
constexpr int64_t kFfn = 96, kMaxPositions = 16;

float lcg(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * lcg(seed);
  return v;
}

// ---- the caller's operations --------------------------------------------------------

struct Tensor {
  const float* data;
  const int64_t* dims;
  size_t rank;
};

Tensor operand(const fst_opaque_call* call, size_t i) {
  const void* data = nullptr;
  fst_dtype dtype;
  Tensor t{};
  EXPECT_EQ(fst_opaque_call_operand(call, i, &data, &dtype, &t.rank, &t.dims), FST_OK);
  EXPECT_EQ(dtype, FST_F32);
  t.data = static_cast<const float*>(data);
  return t;
}

// out[m,n] = a[m,k] b[k,n]
void matmul(const Tensor& a, const Tensor& b, float* out) {
  const int64_t m = a.dims[0], k = a.dims[1], n = b.dims[1];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(a.data[i * k + p]) * b.data[p * n + j];
      out[i * n + j] = static_cast<float>(sum);
    }
  }
}

// Causal attention over q, k, v [T, H, D]: out[t,h] = softmax_s<=t(q.k / sqrt(D)) v.
void attention(const Tensor& q, const Tensor& k, const Tensor& v, float* out) {
  const int64_t T = q.dims[0], H = q.dims[1], D = q.dims[2];
  std::vector<double> w(static_cast<size_t>(T));
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t t = 0; t < T; ++t) {
      double top = -1e300, total = 0;
      for (int64_t s = 0; s <= t; ++s) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += static_cast<double>(q.data[(t * H + h) * D + d]) * k.data[(s * H + h) * D + d];
        w[static_cast<size_t>(s)] = dot / std::sqrt(static_cast<double>(D));
        top = std::max(top, w[static_cast<size_t>(s)]);
      }
      for (int64_t s = 0; s <= t; ++s)
        total += w[static_cast<size_t>(s)] = std::exp(w[static_cast<size_t>(s)] - top);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t s = 0; s <= t; ++s) acc += w[static_cast<size_t>(s)] * v.data[(s * H + h) * D + d];
        out[(t * H + h) * D + d] = static_cast<float>(acc / total);
      }
    }
  }
}

fst_status run_opaque(const fst_opaque_call* call, void* user_data) {
  ++*static_cast<int*>(user_data);
  const char* name = nullptr;
  void* result = nullptr;
  fst_dtype dtype;
  size_t rank;
  const int64_t* dims;
  if (fst_opaque_call_name(call, &name) != FST_OK ||
      fst_opaque_call_result(call, &result, &dtype, &rank, &dims) != FST_OK)
    return FST_ERROR_INTERNAL;
  if (std::strcmp(name, "matmul") == 0) {
    matmul(operand(call, 0), operand(call, 1), static_cast<float*>(result));
  } else if (std::strcmp(name, "attention") == 0) {
    attention(operand(call, 0), operand(call, 1), operand(call, 2), static_cast<float*>(result));
  } else {
    return FST_ERROR_UNSUPPORTED;
  }
  return FST_OK;
}

// ---- the block ------------------------------------------------------------------------

struct Block {
  GraphHandle graph;
  std::vector<std::vector<float>> float_inputs;  // weights, in input order after the token ids
  std::vector<int32_t> token_ids;
};

class Builder {
 public:
  explicit Builder(fst_graph* g) : g_(g) {}
  fst_value input(const char* name, fst_dtype dtype, std::vector<int64_t> dims) {
    return fst_input(g_, name, dtype, dims.size(), dims.data());
  }
  fst_value constant(const std::vector<float>& data, std::vector<int64_t> dims) {
    return fst_constant_tensor(g_, FST_F32, dims.size(), dims.data(), data.data(),
                               data.size() * sizeof(float));
  }
  fst_value scalar(double v) { return fst_constant_f64(g_, FST_F32, v); }
  fst_value add(fst_value a, fst_value b) { return fst_binary(g_, FST_BINARY_ADD, a, b); }
  fst_value mul(fst_value a, fst_value b) { return fst_binary(g_, FST_BINARY_MUL, a, b); }
  fst_value matmul(fst_value a, fst_value b, int64_t m, int64_t n) {
    const fst_value operands[2] = {a, b};
    const int64_t dims[2] = {m, n};
    return fst_opaque(g_, "matmul", 2, operands, FST_F32, 2, dims);
  }
  fst_value reshape(fst_value x, std::vector<int64_t> dims) {
    return fst_reshape(g_, x, dims.size(), dims.data());
  }
  fst_value rms_norm(fst_value x, fst_value gain) {
    const int64_t axis[1] = {-1};
    fst_value ms = fst_reduce(g_, FST_REDUCE_MEAN, mul(x, x), 1, axis, 1);
    return mul(mul(x, fst_unary(g_, FST_UNARY_RSQRT, add(ms, scalar(1e-6)))), gain);
  }
  // x [T, H, D]: cat(-x[..., D/2:], x[..., :D/2]) along the last axis.
  fst_value rotate_half(fst_value x) {
    const int64_t half = kHeadDim / 2;
    const int64_t lo_start[3] = {0, 0, 0}, lo_stop[3] = {kTokens, kHeads, half};
    const int64_t hi_start[3] = {0, 0, half}, hi_stop[3] = {kTokens, kHeads, kHeadDim};
    fst_value lo = fst_slice(g_, x, 3, lo_start, lo_stop, nullptr);
    fst_value hi = fst_slice(g_, x, 3, hi_start, hi_stop, nullptr);
    const fst_value parts[2] = {fst_unary(g_, FST_UNARY_NEG, hi), lo};
    return fst_concat(g_, 2, parts, -1);
  }
  fst_graph* g_;
};

Block build_block(fst_context* ctx) {
  Block b;
  fst_graph* raw = nullptr;
  EXPECT_EQ(fst_graph_create(ctx, &raw), FST_OK);
  b.graph.reset(raw);
  Builder g(raw);
  // Buffers the model carries: the embedding table, rotary tables and position ids.
  const std::vector<float> embedding = random_floats(kVocab * kModel, 11, 2.0f);
  std::vector<float> cos_table(kMaxPositions * kHeadDim), sin_table(kMaxPositions * kHeadDim);
  for (int64_t p = 0; p < kMaxPositions; ++p) {
    for (int64_t d = 0; d < kHeadDim; ++d) {
      const double freq = std::pow(10000.0, -2.0 * static_cast<double>(d % (kHeadDim / 2)) / kHeadDim);
      cos_table[static_cast<size_t>(p * kHeadDim + d)] = static_cast<float>(std::cos(p * freq));
      sin_table[static_cast<size_t>(p * kHeadDim + d)] = static_cast<float>(std::sin(p * freq));
    }
  }
  std::vector<int32_t> positions(kTokens);
  for (int64_t t = 0; t < kTokens; ++t) positions[static_cast<size_t>(t)] = static_cast<int32_t>(t + 3);
  const int64_t pos_dims[1] = {kTokens};
  const fst_value pos =
      fst_constant_tensor(raw, FST_I32, 1, pos_dims, positions.data(), positions.size() * sizeof(int32_t));

  const fst_value ids = g.input("ids", FST_I32, {kTokens});
  const fst_value g1 = g.input("g1", FST_F32, {kModel});
  const fst_value wqkv = g.input("wqkv", FST_F32, {kModel, 3 * kModel});
  const fst_value wo = g.input("wo", FST_F32, {kModel, kModel});
  const fst_value g2 = g.input("g2", FST_F32, {kModel});
  const fst_value wgu = g.input("wgu", FST_F32, {kModel, 2 * kFfn});
  const fst_value wdown = g.input("wdown", FST_F32, {kFfn, kModel});
  b.float_inputs = {random_floats(kModel, 1, 2.0f),
                    random_floats(kModel * 3 * kModel, 2, 0.25f),
                    random_floats(kModel * kModel, 3, 0.25f),
                    random_floats(kModel, 4, 2.0f),
                    random_floats(kModel * 2 * kFfn, 5, 0.25f),
                    random_floats(kFfn * kModel, 6, 0.2f)};
  b.token_ids.resize(kTokens);
  for (int64_t t = 0; t < kTokens; ++t)
    b.token_ids[static_cast<size_t>(t)] = static_cast<int32_t>((t * 7 + 2) % kVocab);

  const fst_value x = fst_take(raw, g.constant(embedding, {kVocab, kModel}), ids, 0);  // [T, D]
  const fst_value qkv = g.matmul(g.rms_norm(x, g1), wqkv, kTokens, 3 * kModel);
  const int64_t thirds[3] = {kModel, kModel, kModel};
  fst_value qkv_parts[3];
  EXPECT_EQ(fst_split(raw, qkv, 1, 3, thirds, qkv_parts), FST_OK);
  const fst_value cos = g.reshape(fst_take(raw, g.constant(cos_table, {kMaxPositions, kHeadDim}), pos, 0),
                                  {kTokens, 1, kHeadDim});
  const fst_value sin = g.reshape(fst_take(raw, g.constant(sin_table, {kMaxPositions, kHeadDim}), pos, 0),
                                  {kTokens, 1, kHeadDim});
  auto rotary = [&](fst_value flat) {
    const fst_value heads = g.reshape(flat, {kTokens, kHeads, kHeadDim});
    return g.add(g.mul(heads, cos), g.mul(g.rotate_half(heads), sin));
  };
  const fst_value q = rotary(qkv_parts[0]);
  const fst_value k = rotary(qkv_parts[1]);
  const fst_value v = g.reshape(qkv_parts[2], {kTokens, kHeads, kHeadDim});
  const fst_value qkv_heads[3] = {q, k, v};
  const int64_t head_dims[3] = {kTokens, kHeads, kHeadDim};
  const fst_value attn = fst_opaque(raw, "attention", 3, qkv_heads, FST_F32, 3, head_dims);
  const fst_value h = g.add(x, g.matmul(g.reshape(attn, {kTokens, kModel}), wo, kTokens, kModel));
  const fst_value gate_up = g.matmul(g.rms_norm(h, g2), wgu, kTokens, 2 * kFfn);
  const int64_t halves[2] = {kFfn, kFfn};
  fst_value gu[2];
  EXPECT_EQ(fst_split(raw, gate_up, 1, 2, halves, gu), FST_OK);
  const fst_value mlp = g.mul(fst_unary(raw, FST_UNARY_SILU, gu[0]), gu[1]);
  const fst_value y = g.add(h, g.matmul(mlp, wdown, kTokens, kModel));
  EXPECT_EQ(fst_output(raw, "y", y), FST_OK);
  EXPECT_EQ(fst_graph_status(raw), FST_OK) << fst_last_error_message();
  return b;
}

TEST(TransformerBlock, RunsEndToEndThroughTheCallbackAndMatchesTheReference) {
  ContextHandle ctx = testing::host_backend_context(FST_LOG_ERROR);
  Block b = build_block(ctx.get());
  ASSERT_EQ(fst_graph_status(b.graph.get()), FST_OK);
  std::vector<const void*> inputs{b.token_ids.data()};
  for (const auto& w : b.float_inputs) inputs.push_back(w.data());
  std::vector<float> want(kTokens * kModel), got(kTokens * kModel, NAN);
  void* want_ptr[1] = {want.data()};
  int calls = 0;
  ASSERT_EQ(fst_graph_evaluate_reference_with_opaque(b.graph.get(), inputs.data(), inputs.size(), want_ptr, 1,
                                                     run_opaque, &calls),
            FST_OK)
      << fst_last_error_message();
  EXPECT_EQ(calls, 5);
  if (const char* path = std::getenv("FSTITCH_TEST_PRINT_BLOCK")) {
    char* text = nullptr;
    ASSERT_EQ(fst_graph_print(b.graph.get(), &text), FST_OK);
    FILE* f = std::fopen(path, "w");
    std::fputs(text, f);
    std::fclose(f);
    fst_string_free(text);
  }
  for (fst_fusion_policy policy : {FST_POLICY_STITCH, FST_POLICY_LOOP, FST_POLICY_NONE}) {
    SCOPED_TRACE("policy " + std::to_string(policy));
    fst_fuse_options* options = nullptr;
    ASSERT_EQ(fst_fuse_options_create(&options), FST_OK);
    testing::FuseOptionsHandle owned(options);
    ASSERT_EQ(fst_fuse_options_set_policy(options, policy), FST_OK);
    fst_fusion* raw = nullptr;
    ASSERT_EQ(fst_fuse(b.graph.get(), options, &raw), FST_OK) << fst_last_error_message();
    FusionHandle fusion(raw);
    const FusionPlan& plan = fusion->plan;
    // No kernel exists only to copy a view.
    for (const PlannedKernel& k : plan.kernels) {
      bool only_views = !k.spec.members.empty();
      for (ValueId v : k.spec.members) only_views = only_views && is_view_op(fusion->graph, v);
      EXPECT_FALSE(only_views) << k.name << " only copies a view";
    }
    if (policy == FST_POLICY_STITCH) {
      // Each region between opaque operations is at most one kernel.
      size_t run = 0;
      for (const PlanStep& step : plan.steps) {
        run = step.kind == StepKind::kKernel ? run + 1 : 0;
        EXPECT_LE(run, 1u) << dump_plan(fusion->graph, plan);
      }
    }
    std::fill(got.begin(), got.end(), NAN);
    void* got_ptr[1] = {got.data()};
    calls = 0;
    ASSERT_EQ(fst_fusion_run_with_opaque(fusion.get(), inputs.data(), inputs.size(), got_ptr, 1, nullptr,
                                         nullptr, run_opaque, &calls),
              FST_OK)
        << fst_last_error_message();
    EXPECT_EQ(calls, 5);
    double err = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
      norm += static_cast<double>(want[i]) * want[i];
    }
    EXPECT_LT(std::sqrt(err / norm), 1e-5);  // NaN fails
  }
}

}  // namespace
}  // namespace fstitch
