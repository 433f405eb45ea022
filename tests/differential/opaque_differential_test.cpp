// Differential tests with opaque operations: seeded random graphs in which random values pass
// through opaque operations with known semantics that the test implements as callbacks (an
// identity, a pair of transposes, a matmul by an identity matrix built from iotas, an
// operation with two operands that returns its first). Each graph is fused under every policy
// through the C API, its steps are checked against every dependency, it runs through the
// callback on the host backend in both thread orders, and every output is compared with the
// reference evaluator run through the same callback. The opaque operations keep the graph's
// meaning, so the reference through the callback must equal the reference of the graph
// without them exactly, and the tolerances and noise floors of that graph apply.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/capi_handles.hpp"
#include "common/random_graph.hpp"
#include "differential/compare.hpp"
#include "differential/harness.hpp"
#include "differential/noise_floor.hpp"
#include "fstitch.h"
#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "ref/evaluator.hpp"

namespace fstitch::testing {
namespace {

// ---- the opaque operations ------------------------------------------------------------

size_t element_bytes(fst_dtype dtype) {
  return fst_dtype_size(dtype);
}

int64_t elements(size_t rank, const int64_t* dims) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

struct Operand {
  const void* data;
  fst_dtype dtype;
  size_t rank;
  const int64_t* dims;
};

Operand operand_of(const fst_opaque_call* call, size_t index) {
  Operand o{};
  EXPECT_EQ(fst_opaque_call_operand(call, index, &o.data, &o.dtype, &o.rank, &o.dims), FST_OK);
  return o;
}

// "transpose": swaps the last two axes (a copy for rank < 2).
void transpose(const Operand& x, void* out) {
  const size_t size = element_bytes(x.dtype);
  if (x.rank < 2) {
    std::memcpy(out, x.data, static_cast<size_t>(elements(x.rank, x.dims)) * size);
    return;
  }
  const int64_t rows = x.dims[x.rank - 2], cols = x.dims[x.rank - 1];
  const int64_t batches = elements(x.rank, x.dims) / (rows * cols);
  const auto* in = static_cast<const unsigned char*>(x.data);
  auto* o = static_cast<unsigned char*>(out);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        std::memcpy(o + static_cast<size_t>((b * cols + c) * rows + r) * size,
                    in + static_cast<size_t>((b * rows + r) * cols + c) * size, size);
      }
    }
  }
}

// "matmul": [m,k] x [k,n] in f32 or f64, accumulated in double.
template <class T>
void matmul(const Operand& a, const Operand& b, void* out) {
  const int64_t m = a.dims[0], k = a.dims[1], n = b.dims[1];
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  T* z = static_cast<T*>(out);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(x[i * k + p]) * static_cast<double>(y[p * n + j]);
      z[i * n + j] = static_cast<T>(sum);
    }
  }
}

struct CallLog {
  int calls = 0;
};

fst_status run_opaque(const fst_opaque_call* call, void* user_data) {
  ++static_cast<CallLog*>(user_data)->calls;
  const char* name = nullptr;
  size_t count = 0;
  void* result = nullptr;
  fst_dtype dtype;
  size_t rank;
  const int64_t* dims;
  if (fst_opaque_call_name(call, &name) != FST_OK || fst_opaque_call_operand_count(call, &count) != FST_OK ||
      fst_opaque_call_result(call, &result, &dtype, &rank, &dims) != FST_OK) {
    return FST_ERROR_INTERNAL;
  }
  const std::string op = name;
  const Operand x = operand_of(call, 0);
  const size_t bytes = static_cast<size_t>(elements(rank, dims)) * element_bytes(dtype);
  if (op == "identity" || op == "first") {
    std::memcpy(result, x.data, bytes);
  } else if (op == "transpose") {
    transpose(x, result);
  } else if (op == "matmul" && count == 2) {
    const Operand y = operand_of(call, 1);
    if (dtype == FST_F64) {
      matmul<double>(x, y, result);
    } else {
      matmul<float>(x, y, result);
    }
  } else {
    fst_opaque_call_fail(call, "the test implements no such operation");
    return FST_ERROR_UNSUPPORTED;
  }
  return FST_OK;
}

// ---- graphs with opaque operations ----------------------------------------------------

// Copies `g`, routing some values through opaque operations that keep their meaning: later
// uses (and outputs) of such a value read the opaque result instead.
Graph with_opaque_ops(const Graph& g, uint64_t seed, int* wrapped) {
  Rng rng(seed ^ 0x0a9a9e);
  Graph out;
  std::vector<ValueId> map(g.size(), -1);
  std::vector<ValueId> earlier;  // values of `out` a multi-operand operation may also read
  *wrapped = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    Node n = g.node(static_cast<ValueId>(i));
    for (ValueId& o : n.operands) o = map[static_cast<size_t>(o)];
    const bool constant = n.op == OpKind::kConstant;
    ValueId v = out.append(n);
    map[i] = v;
    if (constant || n.dims.empty() || !rng.chance(0.3)) continue;
    const Dims dims = n.dims;
    ++*wrapped;
    switch (rng.below(4)) {
      case 0:
        v = build_opaque(out, "identity", {v}, n.dtype, dims);
        break;
      case 1: {
        Dims swapped = dims;
        if (swapped.size() >= 2) std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        const ValueId t = build_opaque(out, "transpose", {v}, n.dtype, swapped);
        v = build_opaque(out, "transpose", {t}, n.dtype, dims);
        break;
      }
      case 2: {
        const int64_t cols = dims.back();
        if ((n.dtype != DType::kF32 && n.dtype != DType::kF64) || cols > 128) {
          v = build_opaque(out, "identity", {v}, n.dtype, dims);
          break;
        }
        // v (viewed as rows x cols) times the identity matrix eq(iota0, iota1).
        const int64_t rows = element_count(dims) / cols;
        const ValueId a = build_reshape(out, v, {rows, cols});
        const ValueId eye =
            build_cast(out,
                       build_binary(out, OpKind::kEq, build_iota(out, DType::kI32, {cols, cols}, 0),
                                    build_iota(out, DType::kI32, {cols, cols}, 1)),
                       n.dtype);
        const ValueId m = build_opaque(out, "matmul", {a, eye}, n.dtype, {rows, cols});
        v = build_reshape(out, m, dims);
        break;
      }
      default: {
        const ValueId other = earlier.empty() ? v : earlier[static_cast<size_t>(rng.below(earlier.size()))];
        v = build_opaque(out, "first", {v, other}, n.dtype, dims);
        break;
      }
    }
    map[i] = v;
    earlier.push_back(v);
  }
  for (const GraphOutput& o : g.outputs()) out.add_output(o.name, map[static_cast<size_t>(o.value)]);
  return out;
}

// ---- checking a fusion ----------------------------------------------------------------

// Every step reads only what the caller or an earlier step wrote at that location, and
// every output is written. Kernel parameters do not say which ones a kernel writes, so a
// parameter at a location nothing has written yet counts as written by its kernel.
void expect_steps_respect_dependencies(const fst_fusion* f, size_t ninputs, size_t noutputs) {
  std::set<std::pair<int, size_t>> written;
  for (size_t i = 0; i < ninputs; ++i) written.insert({FST_PARAM_INPUT, i});
  size_t steps = 0;
  ASSERT_EQ(fst_fusion_step_count(f, &steps), FST_OK);
  for (size_t s = 0; s < steps; ++s) {
    fst_step_kind kind;
    size_t index = 0;
    ASSERT_EQ(fst_fusion_step(f, s, &kind, &index), FST_OK);
    if (kind == FST_STEP_KERNEL) {
      const fst_kernel* k = nullptr;
      size_t params = 0;
      ASSERT_EQ(fst_fusion_kernel(f, index, &k), FST_OK);
      ASSERT_EQ(fst_kernel_param_count(k, &params), FST_OK);
      for (size_t p = 0; p < params; ++p) {
        fst_param_kind pk;
        size_t at;
        ASSERT_EQ(fst_kernel_param(k, p, &pk, &at, nullptr), FST_OK);
        written.insert({pk, at});
      }
      continue;
    }
    size_t operands = 0;
    const char* name = nullptr;
    ASSERT_EQ(fst_fusion_opaque(f, index, &name, &operands, nullptr), FST_OK);
    fst_param_kind pk;
    size_t at, rank;
    fst_dtype dtype;
    const int64_t* dims;
    for (size_t o = 0; o < operands; ++o) {
      ASSERT_EQ(fst_fusion_opaque_operand(f, index, o, &pk, &at, &dtype, &rank, &dims), FST_OK);
      EXPECT_TRUE(written.count({pk, at}))
          << "step " << s << " (" << name << ") reads operand " << o << " before any step wrote it";
    }
    ASSERT_EQ(fst_fusion_opaque_result(f, index, &pk, &at, &dtype, &rank, &dims), FST_OK);
    written.insert({pk, at});
  }
  for (size_t j = 0; j < noutputs; ++j) EXPECT_TRUE(written.count({FST_PARAM_OUTPUT, j})) << "output " << j;
}

ContextHandle host_context(bool reverse) {
  if (reverse) setenv("FSTITCH_HOST_THREAD_ORDER", "reverse", 1);
  ContextOptionsHandle options;
  fst_context_options* raw = nullptr;
  EXPECT_EQ(fst_context_options_create(&raw), FST_OK);
  options.reset(raw);
  EXPECT_EQ(fst_context_options_set_backend(raw, FST_BACKEND_HOST), FST_OK);
  EXPECT_EQ(fst_context_options_set_log_level(raw, FST_LOG_ERROR), FST_OK);
#ifdef FSTITCH_DIFF_CACHE_DIR
  EXPECT_EQ(fst_context_options_set_cache_dir(raw, FSTITCH_DIFF_CACHE_DIR), FST_OK);
#endif
  fst_context* ctx = nullptr;
  EXPECT_EQ(fst_context_create(raw, &ctx), FST_OK) << fst_last_error_message();
  if (reverse) unsetenv("FSTITCH_HOST_THREAD_ORDER");
  return ContextHandle(ctx);
}

std::vector<unsigned char> bytes_of(const Graph& g, ValueId v) {
  return std::vector<unsigned char>(static_cast<size_t>(value_bytes(g, v)));
}

size_t total_opaque_calls = 0;  // over all fused runs, printed at the end

void check_seed(uint64_t seed, fst_context* forward, fst_context* reverse) {
  RandomGraphOptions options;
  options.max_elements = 20000;
  options.allow_long_rows = false;
  const Graph plain = random_graph(seed, options);
  int wrapped = 0;
  const Graph g = with_opaque_ops(plain, seed, &wrapped);
  const std::string text = print_graph(g);
  SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);

  // Inputs, and the reference of the graph without opaque operations.
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<const void*> in;
  for (size_t i = 0; i < plain.inputs().size(); ++i) {
    const ValueId v = plain.inputs()[i];
    inputs.push_back(bytes_of(plain, v));
    fill_random_input(inputs.back().data(), element_count(plain.node(v).dims), plain.node(v).dtype,
                      seed * 31 + i);
    in.push_back(inputs.back().data());
  }
  std::vector<std::vector<unsigned char>> want;
  std::vector<void*> want_ptrs;
  for (const GraphOutput& o : plain.outputs()) {
    want.push_back(bytes_of(plain, o.value));
    want_ptrs.push_back(want.back().data());
  }
  evaluate_reference(plain, in, want_ptrs);
  std::vector<Tolerance> tolerances = output_tolerances(plain);
  const std::vector<NoiseFloor> floors = measure_noise_floor(
      plain, in, std::vector<const void*>(want_ptrs.begin(), want_ptrs.end()), seed ^ 0x401e);
  for (size_t i = 0; i < tolerances.size(); ++i) {
    if (tolerances[i].exact) continue;
    tolerances[i].l2 = std::max(tolerances[i].l2, 4 * floors[i].l2);
    tolerances[i].max_over_rms = std::max(tolerances[i].max_over_rms, 4 * floors[i].max_over_rms);
  }

  for (fst_context* ctx : {forward, reverse}) {
    const bool is_reverse = ctx == reverse;
    fst_graph* raw = nullptr;
    ASSERT_EQ(fst_graph_parse(ctx, text.c_str(), text.size(), &raw), FST_OK) << fst_last_error_message();
    GraphHandle graph(raw);
    if (!is_reverse) {
      // The reference through the callback equals the reference without opaque operations.
      std::vector<std::vector<unsigned char>> got;
      std::vector<void*> got_ptrs;
      for (const GraphOutput& o : g.outputs()) {
        got.push_back(bytes_of(g, o.value));
        got_ptrs.push_back(got.back().data());
      }
      CallLog log;
      ASSERT_EQ(fst_graph_evaluate_reference_with_opaque(graph.get(), in.data(), in.size(), got_ptrs.data(),
                                                         got_ptrs.size(), run_opaque, &log),
                FST_OK)
          << fst_last_error_message();
      EXPECT_EQ(got, want);
    }
    for (fst_fusion_policy policy : {FST_POLICY_STITCH, FST_POLICY_LOOP, FST_POLICY_NONE}) {
      // Each policy in forward order, one rotating policy in reverse order.
      if (is_reverse && static_cast<uint64_t>(policy) != seed % 3) continue;
      SCOPED_TRACE(std::string("policy ") + std::to_string(policy) +
                   (is_reverse ? ", reverse" : ", forward"));
      fst_fuse_options* raw_options = nullptr;
      ASSERT_EQ(fst_fuse_options_create(&raw_options), FST_OK);
      FuseOptionsHandle fuse_options(raw_options);
      ASSERT_EQ(fst_fuse_options_set_policy(raw_options, policy), FST_OK);
      fst_fusion* raw_fusion = nullptr;
      ASSERT_EQ(fst_fuse(graph.get(), raw_options, &raw_fusion), FST_OK) << fst_last_error_message();
      FusionHandle fusion(raw_fusion);
      expect_steps_respect_dependencies(fusion.get(), g.inputs().size(), g.outputs().size());
      size_t workspace_bytes = 0;
      ASSERT_EQ(fst_fusion_workspace_size(fusion.get(), &workspace_bytes), FST_OK);
      std::vector<unsigned char> workspace(workspace_bytes + 1, 0xff);  // NaN until written
      std::vector<std::vector<unsigned char>> got;
      std::vector<void*> got_ptrs;
      for (const GraphOutput& o : g.outputs()) {
        got.emplace_back(static_cast<size_t>(value_bytes(g, o.value)), 0xff);
        got_ptrs.push_back(got.back().data());
      }
      CallLog log;
      ASSERT_EQ(fst_fusion_run_with_opaque(fusion.get(), in.data(), in.size(), got_ptrs.data(),
                                           got_ptrs.size(), workspace.data(), nullptr, run_opaque, &log),
                FST_OK)
          << fst_last_error_message();
      size_t opaque_ops = 0;
      ASSERT_EQ(fst_fusion_opaque_count(fusion.get(), &opaque_ops), FST_OK);
      EXPECT_EQ(static_cast<size_t>(log.calls), opaque_ops);
      total_opaque_calls += opaque_ops;
      for (size_t j = 0; j < g.outputs().size(); ++j) {
        const Node& n = g.node(g.outputs()[j].value);
        const Comparison c = compare_output(got[j].data(), want[j].data(), n.dtype, n.dims, tolerances[j]);
        EXPECT_TRUE(c.ok) << "output " << g.outputs()[j].name << ": " << c.report;
      }
    }
  }
}

TEST(OpaqueDifferential, RandomGraphsThroughOpaqueCallbacksMatchTheReference) {
  ContextHandle forward = host_context(false);
  ContextHandle reverse = host_context(true);
  ASSERT_TRUE(forward && reverse);
  uint64_t first = 1, last = 24;
  if (const char* range = std::getenv("FSTITCH_DIFF_OPAQUE_SEEDS")) {
    const auto parsed = parse_seed_range(range);
    ASSERT_TRUE(parsed) << "FSTITCH_DIFF_OPAQUE_SEEDS=" << range << " is not a or a-b";
    std::tie(first, last) = *parsed;
  }
  for (uint64_t seed = first; seed <= last; ++seed) {
    check_seed(seed, forward.get(), reverse.get());
    if (HasFatalFailure()) return;
  }
  std::printf("seeds %llu-%llu: %zu opaque steps run through the callback\n",
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(last),
              total_opaque_calls);
  EXPECT_GT(total_opaque_calls, 0u);
}

}  // namespace
}  // namespace fstitch::testing
