// A plan with many kernels on the host backend: with the translation unit limit lowered
// (the context's host_unit_kernel_bytes, a seam for tests), its module is compiled as one
// unit per kernel, linked into one object, and every output matches the reference; with the
// default limit the same plan is one unit, as before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "api/fusion.hpp"
#include "api/handles.hpp"
#include "runtime/host/host_module.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kOutputs = 6;
constexpr int64_t kRows = 8, kCols = 96;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/fstitch-split-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
};

fst_context* host_context(const fs::path& cache) {
  fst_context_options* options = nullptr;
  EXPECT_EQ(fst_context_options_create(&options), FST_OK);
  EXPECT_EQ(fst_context_options_set_cache_dir(options, cache.c_str()), FST_OK);
  EXPECT_EQ(fst_context_options_set_backend(options, FST_BACKEND_HOST), FST_OK);
  fst_context* ctx = nullptr;
  EXPECT_EQ(fst_context_create(options, &ctx), FST_OK) << fst_last_error_message();
  fst_context_options_destroy(options);
  return ctx;
}

// Independent outputs, each from its own input: y_i = tanh(exp(x_i) * c_i), every other one
// summed over rows: fused with policy none, a kernel per operation.
fst_graph* many_outputs(fst_context* ctx) {
  fst_graph* g = nullptr;
  EXPECT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t dims[2] = {kRows, kCols}, axis[1] = {1};
  for (int i = 0; i < kOutputs; ++i) {
    const fst_value x = fst_input(g, ("x" + std::to_string(i)).c_str(), FST_F32, 2, dims);
    fst_value y = fst_unary(g, FST_UNARY_TANH,
                            fst_binary(g, FST_BINARY_MUL, fst_unary(g, FST_UNARY_EXP, x),
                                       fst_constant_f64(g, FST_F32, 0.25 + 0.125 * i)));
    if (i % 2 == 1) y = fst_reduce(g, FST_REDUCE_SUM, y, 1, axis, 1);
    EXPECT_EQ(fst_output(g, ("y" + std::to_string(i)).c_str(), y), FST_OK);
  }
  return g;
}

std::size_t output_size(int i) {
  return static_cast<std::size_t>(i % 2 == 1 ? kRows : kRows * kCols);
}

struct Launches {
  std::size_t kernels = 0;  // launches of the plan
  std::size_t units = 0;    // translation units of its host module
};

// Runs the graph's fusion on the host and compares with the reference.
Launches run_and_check(fst_context* ctx) {
  fst_graph* g = many_outputs(ctx);
  // One kernel per operation (policy none, which packs no launches): many kernels.
  fst_fuse_options* options = nullptr;
  EXPECT_EQ(fst_fuse_options_create(&options), FST_OK);
  EXPECT_EQ(fst_fuse_options_set_policy(options, FST_POLICY_NONE), FST_OK);
  fst_fusion* fusion = nullptr;
  EXPECT_EQ(fst_fuse(g, options, &fusion), FST_OK) << fst_last_error_message();
  fst_fuse_options_destroy(options);
  std::size_t kernels = 0;
  EXPECT_EQ(fst_fusion_kernel_count(fusion, &kernels), FST_OK);
  EXPECT_GE(kernels, static_cast<std::size_t>(3 * kOutputs));

  std::vector<std::vector<float>> inputs(kOutputs), outputs(kOutputs), expected(kOutputs);
  std::vector<const void*> input_pointers;
  std::vector<void*> output_pointers, expected_pointers;
  for (int i = 0; i < kOutputs; ++i) {
    inputs[i].resize(kRows * kCols);
    for (std::size_t e = 0; e < inputs[i].size(); ++e)
      inputs[i][e] = static_cast<float>((e * 7 + i) % 23) / 23.0f - 0.5f;
    outputs[i].assign(output_size(i), -99.0f);
    expected[i].assign(output_size(i), 0.0f);
    input_pointers.push_back(inputs[i].data());
    output_pointers.push_back(outputs[i].data());
    expected_pointers.push_back(expected[i].data());
  }
  EXPECT_EQ(fst_fusion_run(fusion, input_pointers.data(), kOutputs, output_pointers.data(), kOutputs, nullptr,
                           nullptr),
            FST_OK)
      << fst_last_error_message();
  EXPECT_EQ(
      fst_graph_evaluate_reference(g, input_pointers.data(), kOutputs, expected_pointers.data(), kOutputs),
      FST_OK);
  for (int i = 0; i < kOutputs; ++i) {
    for (std::size_t e = 0; e < outputs[i].size(); ++e) {
      EXPECT_NEAR(outputs[i][e], expected[i][e], 1e-5 * (1 + std::fabs(expected[i][e])))
          << "output y" << i << ", element " << e;
    }
  }
  const std::size_t units = fusion->host_module()->unit_count();
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  return {kernels, units};
}

TEST(HostSplit, APlanOverTheUnitLimitIsSplitAndRunsCorrectly) {
  const TempDir cache;
  fst_context* ctx = host_context(cache.path);
  ctx->impl->config.host_unit_kernel_bytes = 1;  // every kernel is over it: a unit per kernel
  const Launches run = run_and_check(ctx);
  EXPECT_EQ(run.units, run.kernels);
  fst_context_destroy(ctx);
}

TEST(HostSplit, APlanUnderTheUnitLimitIsOneUnit) {
  const TempDir cache;
  fst_context* ctx = host_context(cache.path);
  EXPECT_EQ(run_and_check(ctx).units, 1u);
  fst_context_destroy(ctx);
}

}  // namespace
