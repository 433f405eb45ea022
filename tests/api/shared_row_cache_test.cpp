// Rows whose cached values do not fit the register budget stay in shared memory
// (block-per-row kernels): planned at the lower bound, and the generated kernel, run on the
// host backend, matches the reference evaluator; NVRTC compiles it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/fusion.hpp"
#include "api/handles.hpp"
#include "common/backend_run.hpp"

namespace {

TEST(SharedRowCache, ThreeCachedValuesUseSharedMemoryAndMatchTheReference) {
  fst_context* ctx = nullptr;
  ASSERT_EQ(fst_context_create(nullptr, &ctx), FST_OK);
  fst_graph* g = nullptr;
  ASSERT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t rows = 16, cols = 2048, dims[2] = {rows, cols}, axis[1] = {-1};
  fst_value x = fst_input(g, "x", FST_F32, 2, dims);
  fst_value y = fst_input(g, "y", FST_F32, 2, dims);
  fst_value s1 = fst_reduce(g, FST_REDUCE_SUM, fst_binary(g, FST_BINARY_MUL, x, y), 1, axis, 1);
  // Expensive, so d is cached rather than recomputed from x in each pass.
  fst_value d = fst_unary(g, FST_UNARY_EXP, fst_binary(g, FST_BINARY_SUB, x, s1));
  fst_value s2 = fst_reduce(g, FST_REDUCE_MEAN, fst_binary(g, FST_BINARY_MUL, d, y), 1, axis, 1);
  fst_value out = fst_binary(g, FST_BINARY_ADD,
                             fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, s2),
                                        fst_binary(g, FST_BINARY_MUL, y, s1)),
                             d);
  ASSERT_EQ(fst_output(g, "out", out), FST_OK);

  fst_fuse_options* options = nullptr;
  ASSERT_EQ(fst_fuse_options_create(&options), FST_OK);
  // Below the API's minimum of 32: no mapping of threads onto the row can keep three values
  // in registers, so the kernel must choose between shared memory and re-reading x and y.
  options->options.register_cap = 4;
  fst_fusion* f = nullptr;
  ASSERT_EQ(fst_fuse(g, options, &f), FST_OK) << fst_last_error_message();
  fst_fuse_options_destroy(options);

  ASSERT_EQ(f->plan.kernels.size(), 1u) << fstitch::dump_plan(f->graph, f->plan);
  const fstitch::KernelSpec& spec = f->plan.kernels[0].spec;
  EXPECT_EQ(spec.schedule, fstitch::ScheduleKind::kBlockPerRow);
  EXPECT_EQ(spec.cache, fstitch::RowCache::kShared) << fstitch::dump_plan(f->graph, f->plan);
  EXPECT_EQ(spec.cached.size(), 3u);
  EXPECT_EQ(spec.shared_buffer_types.size(), 3u);  // x, y and d are all alive in pass 1
  EXPECT_EQ(f->plan.planned_bytes, f->plan.lower_bound_bytes);
  EXPECT_NE(f->source.find("FST_SHARED(float, fst_row_cache2, 2048)"), std::string::npos);

  std::vector<float> xs(static_cast<size_t>(rows * cols)), ys(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
    ys[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i)) * 0.01);
  }
  std::vector<float> fused(xs.size(), NAN), ref(xs.size(), NAN);
  const void* inputs[2] = {xs.data(), ys.data()};
  void* outputs[1] = {fused.data()};
  const size_t bytes = xs.size() * sizeof(float);
  ASSERT_EQ(
      fstitch::testing::run_on_backend(f, {{xs.data(), bytes}, {ys.data(), bytes}}, {{fused.data(), bytes}}),
      FST_OK)
      << fst_last_error_message();
  outputs[0] = ref.data();
  ASSERT_EQ(fst_graph_evaluate_reference(g, inputs, 2, outputs, 1), FST_OK);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff += (static_cast<double>(fused[i]) - ref[i]) * (static_cast<double>(fused[i]) - ref[i]);
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-5);

  // The same kernel text compiles with NVRTC and declares its shared buffers.
  const fst_kernel* kernel = nullptr;
  ASSERT_EQ(fst_fusion_kernel(f, 0, &kernel), FST_OK);
  const char* ptx = nullptr;
  ASSERT_EQ(fst_kernel_ptx(kernel, &ptx), FST_OK) << fst_last_error_message();
  EXPECT_NE(std::string(ptx).find(".shared"), std::string::npos);

  fst_fusion_destroy(f);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
}

}  // namespace
