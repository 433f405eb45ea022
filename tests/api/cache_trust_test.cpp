// The cache trust rules through the public API: a host run with a cache directory others may
// write succeeds without it, and the warning reaches the context's log callback.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fstitch.h"

namespace {

namespace fs = std::filesystem;

void record(void* user_data, fst_log_level level, const char* message) {
  if (level == FST_LOG_WARN) static_cast<std::vector<std::string>*>(user_data)->push_back(message);
}

TEST(CacheTrust, AHostRunWithASharedCacheDirectoryWarnsThroughTheLogAndSucceeds) {
  std::string pattern = (fs::temp_directory_path() / "fstitch-api-trust-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);

  std::vector<std::string> warnings;
  fst_context_options* options = nullptr;
  ASSERT_EQ(fst_context_options_create(&options), FST_OK);
  ASSERT_EQ(fst_context_options_set_cache_dir(options, dir.c_str()), FST_OK);
  ASSERT_EQ(fst_context_options_set_backend(options, FST_BACKEND_HOST), FST_OK);
  ASSERT_EQ(fst_context_options_set_log_callback(options, record, &warnings), FST_OK);
  fst_context* ctx = nullptr;
  ASSERT_EQ(fst_context_create(options, &ctx), FST_OK) << fst_last_error_message();
  fst_context_options_destroy(options);

  fst_graph* g = nullptr;
  ASSERT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t dims[1] = {64};
  const fst_value x = fst_input(g, "x", FST_F32, 1, dims);
  ASSERT_EQ(fst_output(g, "y", fst_unary(g, FST_UNARY_EXP, x)), FST_OK) << fst_last_error_message();
  fst_fusion* f = nullptr;
  ASSERT_EQ(fst_fuse(g, nullptr, &f), FST_OK) << fst_last_error_message();
  std::vector<float> in(64, 0.0f), out(64, -1.0f);
  const void* inputs[] = {in.data()};
  void* outputs[] = {out.data()};
  EXPECT_EQ(fst_fusion_run(f, inputs, 1, outputs, 1, nullptr, nullptr), FST_OK) << fst_last_error_message();
  for (float value : out) ASSERT_EQ(value, 1.0f);

  bool warned = false;
  for (const std::string& warning : warnings) {
    warned = warned || warning.find("host object cache folder " + dir.string() + " is not trusted") == 0;
  }
  EXPECT_TRUE(warned) << (warnings.empty() ? "no warning" : warnings[0]);
  EXPECT_FALSE(fs::exists(dir / "host")) << "nothing is written to a directory that is not trusted";

  fst_fusion_destroy(f);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  fs::remove_all(dir);
}

}  // namespace
