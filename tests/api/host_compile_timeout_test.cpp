// Through the public API: a host compiler that hangs makes fst_fusion_run fail with
// FST_ERROR_COMPILE once FSTITCH_HOST_COMPILE_TIMEOUT has passed, with a message that names
// the limit and the variable; a malformed variable is FST_ERROR_INVALID_ARGUMENT.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fstitch.h"

namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/fstitch-timeout-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Sets the variables for one test, then removes them (the test runs without them).
struct Environment {
  Environment(const std::string& cxx, const char* timeout) {
    setenv("FSTITCH_HOST_CXX", cxx.c_str(), 1);
    setenv("FSTITCH_HOST_COMPILE_TIMEOUT", timeout, 1);
  }
  ~Environment() {
    unsetenv("FSTITCH_HOST_CXX");
    unsetenv("FSTITCH_HOST_COMPILE_TIMEOUT");
  }
};

// Fuses y = exp(x) on a host context with its cache in `dir` and runs it.
fst_status fuse_and_run(const fs::path& dir) {
  fst_context_options* options = nullptr;
  EXPECT_EQ(fst_context_options_create(&options), FST_OK);
  EXPECT_EQ(fst_context_options_set_backend(options, FST_BACKEND_HOST), FST_OK);
  EXPECT_EQ(fst_context_options_set_cache_dir(options, dir.c_str()), FST_OK);
  fst_context* ctx = nullptr;
  EXPECT_EQ(fst_context_create(options, &ctx), FST_OK);
  fst_context_options_destroy(options);
  fst_graph* g = nullptr;
  EXPECT_EQ(fst_graph_create(ctx, &g), FST_OK);
  const int64_t dims[1] = {16};
  EXPECT_EQ(fst_output(g, "y", fst_unary(g, FST_UNARY_EXP, fst_input(g, "x", FST_F32, 1, dims))), FST_OK);
  fst_fusion* fusion = nullptr;
  EXPECT_EQ(fst_fuse(g, nullptr, &fusion), FST_OK);
  std::vector<float> x(16, 0.0f), y(16, 0.0f);
  const void* inputs[] = {x.data()};
  void* outputs[] = {y.data()};
  const fst_status status = fst_fusion_run(fusion, inputs, 1, outputs, 1, nullptr, nullptr);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  fst_context_destroy(ctx);
  return status;
}

TEST(HostRunTimeout, AHangingHostCompilerFailsTheRunWithACompileError) {
  const TempDir dir;
  const std::string compiler = (dir.path / "hanging-c++").string();
  std::ofstream(compiler)
      << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo hanging 1; exit 0; fi\nexec sleep 100000\n";
  chmod(compiler.c_str(), 0755);
  {
    const Environment environment(compiler, "0.3");
    EXPECT_EQ(fuse_and_run(dir.path), FST_ERROR_COMPILE);
    const std::string message = fst_last_error_message();
    EXPECT_NE(message.find("did not finish within 0.3 s (FSTITCH_HOST_COMPILE_TIMEOUT='0.3')"),
              std::string::npos)
        << message;
  }
  {
    const Environment environment(compiler, "ten minutes");
    EXPECT_EQ(fuse_and_run(dir.path), FST_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fst_last_error_message()).find("FSTITCH_HOST_COMPILE_TIMEOUT='ten minutes'"),
              std::string::npos);
  }
}

}  // namespace
