// The compile cache through the public API: a second fusion of the same graph hits the
// context's memory cache, a new context on the same directory (as a new process would)
// hits the disk cache, and a corrupted entry is discarded and compiled again; the counters
// of fst_context_compile_stat and fst_fusion_compile_stat say so, for NVRTC modules and host
// modules alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fstitch.h"

namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/fstitch-cache-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
};

fst_context* context_with_cache(const fs::path& dir) {
  fst_context_options* options = nullptr;
  EXPECT_EQ(fst_context_options_create(&options), FST_OK);
  EXPECT_EQ(fst_context_options_set_cache_dir(options, dir.c_str()), FST_OK);
  // NVRTC caching is the same on either backend; the host one always exists.
  EXPECT_EQ(fst_context_options_set_backend(options, FST_BACKEND_HOST), FST_OK);
  fst_context* ctx = nullptr;
  EXPECT_EQ(fst_context_create(options, &ctx), FST_OK) << fst_last_error_message();
  fst_context_options_destroy(options);
  return ctx;
}

// The public counters of a context or a fusion.
struct Counts {
  uint64_t compiled = 0, memory_hits = 0, disk_hits = 0, disk_writes = 0, disk_discards = 0, nanoseconds = 0;
};

template <class Handle, class Query>
Counts counts_of(const Handle* handle, Query query) {
  Counts c;
  const std::pair<fst_compile_stat, uint64_t*> fields[] = {
      {FST_COMPILE_STAT_COMPILED, &c.compiled},
      {FST_COMPILE_STAT_MEMORY_HITS, &c.memory_hits},
      {FST_COMPILE_STAT_DISK_HITS, &c.disk_hits},
      {FST_COMPILE_STAT_DISK_WRITES, &c.disk_writes},
      {FST_COMPILE_STAT_DISK_DISCARDS, &c.disk_discards},
      {FST_COMPILE_STAT_COMPILE_NANOSECONDS, &c.nanoseconds}};
  for (const auto& [stat, out] : fields)
    EXPECT_EQ(query(handle, stat, out), FST_OK) << fst_last_error_message();
  return c;
}

Counts stats(const fst_context* ctx) {
  return counts_of(ctx, fst_context_compile_stat);
}

// Softmax over rows of a [32, 128] f32 input, fused (one kernel).
fst_fusion* fuse_softmax(fst_context* ctx) {
  fst_graph* g = nullptr;
  EXPECT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t dims[2] = {32, 128}, axis[1] = {-1};
  fst_value x = fst_input(g, "x", FST_F32, 2, dims);
  fst_value e = fst_unary(g, FST_UNARY_EXP,
                          fst_binary(g, FST_BINARY_SUB, x, fst_reduce(g, FST_REDUCE_MAX, x, 1, axis, 1)));
  EXPECT_EQ(
      fst_output(g, "y", fst_binary(g, FST_BINARY_DIV, e, fst_reduce(g, FST_REDUCE_SUM, e, 1, axis, 1))),
      FST_OK);
  fst_fusion* f = nullptr;
  EXPECT_EQ(fst_fuse(g, nullptr, &f), FST_OK) << fst_last_error_message();
  fst_graph_destroy(g);
  return f;
}

// The softmax fused, then `use`d (which compiles it); what the fusion's compile did.
template <class Use>
Counts fuse_and_count(fst_context* ctx, Use use) {
  fst_fusion* f = fuse_softmax(ctx);
  if (f == nullptr) return {};
  const Counts before = counts_of(f, fst_fusion_compile_stat);
  EXPECT_EQ(before.compiled + before.memory_hits + before.disk_hits, 0u) << "fusing compiles nothing";
  use(f);
  const Counts counted = counts_of(f, fst_fusion_compile_stat);
  fst_fusion_destroy(f);
  return counted;
}

// Compiled to PTX with NVRTC.
Counts fuse_and_compile(fst_context* ctx) {
  return fuse_and_count(ctx, [](fst_fusion* f) {
    const fst_kernel* k = nullptr;
    EXPECT_EQ(fst_fusion_kernel(f, 0, &k), FST_OK);
    const char* ptx = nullptr;
    EXPECT_EQ(fst_kernel_ptx(k, &ptx), FST_OK) << fst_last_error_message();
    if (ptx != nullptr) {
      EXPECT_NE(std::string(ptx).find(".entry"), std::string::npos);
    }
  });
}

// Run on the host backend.
Counts fuse_and_run_on_host(fst_context* ctx) {
  return fuse_and_count(ctx, [](fst_fusion* f) {
    std::vector<float> x(32 * 128, 0.5f), y(32 * 128, 0.0f);
    const void* inputs[1] = {x.data()};
    void* outputs[1] = {y.data()};
    EXPECT_EQ(fst_fusion_run(f, inputs, 1, outputs, 1, nullptr, nullptr), FST_OK) << fst_last_error_message();
    EXPECT_FLOAT_EQ(y[0], 1.0f / 128);
  });
}

TEST(FusionCache, SecondFuseHitsMemoryNewContextHitsDiskCorruptionRecompiles) {
  TempDir dir;
  fst_context* first = context_with_cache(dir.path);
  Counts fusion = fuse_and_compile(first);
  EXPECT_EQ(fusion.compiled, 1u);
  EXPECT_EQ(fusion.disk_writes, 1u);
  EXPECT_GT(fusion.nanoseconds, 0u);
  EXPECT_EQ(stats(first).compiled, 1u);
  fusion = fuse_and_compile(first);
  EXPECT_EQ(fusion.compiled, 0u);
  EXPECT_EQ(fusion.memory_hits, 1u);
  EXPECT_EQ(fusion.nanoseconds, 0u) << "nothing was compiled for the second fusion";
  EXPECT_EQ(stats(first).compiled, 1u);
  EXPECT_EQ(stats(first).memory_hits, 1u);
  EXPECT_EQ(stats(first).disk_writes, 1u);
  fst_context_destroy(first);

  fst_context* second = context_with_cache(dir.path);
  fusion = fuse_and_compile(second);
  EXPECT_EQ(fusion.compiled, 0u);
  EXPECT_EQ(fusion.disk_hits, 1u);
  EXPECT_EQ(stats(second).compiled, 0u);
  EXPECT_EQ(stats(second).disk_hits, 1u);
  fst_context_destroy(second);

  // Flip a byte in the middle of every cache entry.
  size_t corrupted = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path)) {
    if (!entry.is_regular_file()) continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    const auto size = fs::file_size(entry.path());
    file.seekg(static_cast<std::streamoff>(size / 2));
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(static_cast<std::streamoff>(size / 2));
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
    ++corrupted;
  }
  EXPECT_GE(corrupted, 1u);
  fst_context* third = context_with_cache(dir.path);
  fusion = fuse_and_compile(third);
  EXPECT_EQ(fusion.disk_discards, 1u);
  EXPECT_EQ(fusion.compiled, 1u);
  EXPECT_EQ(stats(third).disk_hits, 0u);
  EXPECT_EQ(stats(third).disk_discards, 1u);
  EXPECT_EQ(stats(third).compiled, 1u);
  fst_context_destroy(third);
}

// The host backend compiles a fusion's kernels as one module at its first run: the first
// context compiles and stores it, a second one on the same directory loads it, and the
// context's counters add up its fusions'.
TEST(FusionCache, HostModulesCountTheirCompilesAndDiskHits) {
  TempDir dir;
  fst_context* first = context_with_cache(dir.path);
  Counts fusion = fuse_and_run_on_host(first);
  EXPECT_EQ(fusion.compiled, 1u);
  EXPECT_EQ(fusion.disk_writes, 1u);
  EXPECT_EQ(fusion.disk_hits, 0u);
  EXPECT_GT(fusion.nanoseconds, 0u);
  Counts context = stats(first);
  EXPECT_EQ(context.compiled, 1u);
  EXPECT_EQ(context.nanoseconds, fusion.nanoseconds);
  fusion = fuse_and_run_on_host(first);  // a new fusion: its module comes from the disk cache
  EXPECT_EQ(fusion.compiled, 0u);
  EXPECT_EQ(fusion.disk_hits, 1u);
  EXPECT_EQ(fusion.nanoseconds, 0u);
  context = stats(first);
  EXPECT_EQ(context.compiled, 1u);
  EXPECT_EQ(context.disk_hits, 1u);
  fst_context_destroy(first);

  fst_context* second = context_with_cache(dir.path);
  fusion = fuse_and_run_on_host(second);
  EXPECT_EQ(fusion.compiled, 0u);
  EXPECT_EQ(fusion.disk_hits, 1u);
  EXPECT_EQ(stats(second).disk_hits, 1u);
  fst_context_destroy(second);
}

TEST(FusionCache, CompileStatsRefuseBadArgumentsAndLeaveTheOutputAlone) {
  TempDir dir;
  fst_context* ctx = context_with_cache(dir.path);
  fst_fusion* f = fuse_softmax(ctx);
  uint64_t value = 77;
  EXPECT_EQ(fst_context_compile_stat(nullptr, FST_COMPILE_STAT_COMPILED, &value), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fst_context_compile_stat(ctx, FST_COMPILE_STAT_COMPILED, nullptr), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fst_fusion_compile_stat(nullptr, FST_COMPILE_STAT_COMPILED, &value), FST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fst_fusion_compile_stat(f, FST_COMPILE_STAT_COMPILED, nullptr), FST_ERROR_INVALID_ARGUMENT);
  // Values outside fst_compile_stat are refused too; the C API test passes them (C may hold
  // any int in an enum, C++ may not).
  EXPECT_EQ(value, 77u);
  EXPECT_EQ(fst_fusion_compile_stat(f, FST_COMPILE_STAT_DISK_HITS, &value), FST_OK);
  EXPECT_EQ(value, 0u);
  fst_fusion_destroy(f);
  fst_context_destroy(ctx);
}

}  // namespace
