// The compile cache through the public API: a second fusion of the same graph hits the
// context's memory cache, a new context on the same directory (as a new process would)
// hits the disk cache, and a corrupted entry is discarded and compiled again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/handles.hpp"
#include "jit/kernel_cache.hpp"

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

// softmax over rows of a [32, 128] f32 input, fused and compiled to PTX.
void fuse_and_compile(fst_context* ctx) {
  fst_graph* g = nullptr;
  ASSERT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t dims[2] = {32, 128}, axis[1] = {-1};
  fst_value x = fst_input(g, "x", FST_F32, 2, dims);
  fst_value e = fst_unary(g, FST_UNARY_EXP,
                          fst_binary(g, FST_BINARY_SUB, x, fst_reduce(g, FST_REDUCE_MAX, x, 1, axis, 1)));
  ASSERT_EQ(
      fst_output(g, "y", fst_binary(g, FST_BINARY_DIV, e, fst_reduce(g, FST_REDUCE_SUM, e, 1, axis, 1))),
      FST_OK);
  fst_fusion* f = nullptr;
  ASSERT_EQ(fst_fuse(g, nullptr, &f), FST_OK);
  const fst_kernel* k = nullptr;
  ASSERT_EQ(fst_fusion_kernel(f, 0, &k), FST_OK);
  const char* ptx = nullptr;
  ASSERT_EQ(fst_kernel_ptx(k, &ptx), FST_OK) << fst_last_error_message();
  EXPECT_NE(std::string(ptx).find(".entry"), std::string::npos);
  fst_fusion_destroy(f);
  fst_graph_destroy(g);
}

fstitch::jit::CacheStats stats(fst_context* ctx) {
  return ctx->impl->kernel_cache().stats();
}

TEST(FusionCache, SecondFuseHitsMemoryNewContextHitsDiskCorruptionRecompiles) {
  TempDir dir;
  fst_context* first = context_with_cache(dir.path);
  fuse_and_compile(first);
  EXPECT_EQ(stats(first).compiles, 1u);
  fuse_and_compile(first);
  EXPECT_EQ(stats(first).compiles, 1u);
  EXPECT_EQ(stats(first).memory_hits, 1u);
  fst_context_destroy(first);

  fst_context* second = context_with_cache(dir.path);
  fuse_and_compile(second);
  EXPECT_EQ(stats(second).compiles, 0u);
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
  fuse_and_compile(third);
  EXPECT_EQ(stats(third).disk_hits, 0u);
  EXPECT_EQ(stats(third).disk_discards, 1u);
  EXPECT_EQ(stats(third).compiles, 1u);
  fst_context_destroy(third);
}

}  // namespace
