// Finding and loading NVRTC, and the error when it cannot be found.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "jit/kernel_cache.hpp"
#include "jit/nvrtc_loader.hpp"
#include "support/error.hpp"

namespace fstitch::jit {
namespace {

TEST(NvrtcLoader, FindsTheInstalledNvrtc) {
  std::shared_ptr<const Nvrtc> nvrtc = system_nvrtc();
  ASSERT_NE(nvrtc, nullptr);
  EXPECT_GE(nvrtc->version_major(), 12);
  EXPECT_NE(nvrtc->library().find("libnvrtc.so"), std::string::npos) << nvrtc->library();
  EXPECT_EQ(nvrtc->version_string(),
            std::to_string(nvrtc->version_major()) + "." + std::to_string(nvrtc->version_minor()));
  EXPECT_EQ(system_nvrtc(), nvrtc) << "loaded once and shared";
  EXPECT_EQ(nvrtc->error_string(6), "NVRTC_ERROR_COMPILATION");
}

TEST(NvrtcLoader, LoadsFromAnExplicitToolkitPath) {
  auto nvrtc = load_nvrtc({"/nonexistent/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"});
  EXPECT_EQ(nvrtc->library(), "/usr/local/cuda/lib64/libnvrtc.so");
  EXPECT_EQ(nvrtc->version_string(), system_nvrtc()->version_string());
}

TEST(NvrtcLoader, DefaultCandidatesTryPlainNamesThenToolkitFolders) {
  const char* saved = getenv("FSTITCH_CUDA_HOME");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("FSTITCH_CUDA_HOME", "/opt/my-cuda", 1);
  const std::vector<std::string> candidates = default_nvrtc_candidates();
  if (saved != nullptr) {
    setenv("FSTITCH_CUDA_HOME", saved_value.c_str(), 1);
  } else {
    unsetenv("FSTITCH_CUDA_HOME");
  }
  ASSERT_GE(candidates.size(), 9u);
  EXPECT_EQ(candidates[0], "libnvrtc.so.13");
  EXPECT_EQ(candidates[1], "libnvrtc.so.12");
  EXPECT_EQ(candidates[2], "libnvrtc.so");
  EXPECT_EQ(candidates[3], "/opt/my-cuda/lib64/libnvrtc.so.13");
  EXPECT_EQ(candidates.back(), "/usr/local/cuda/lib64/libnvrtc.so");
}

TEST(NvrtcLoader, MissingLibrariesGiveNoCompilerNamingEachAttempt) {
  try {
    load_nvrtc({"/nonexistent/libnvrtc.so.13", "libfstitch-no-such-nvrtc.so"});
    FAIL() << "expected kNoCompiler";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("NVRTC not found: tried ", 0), 0u) << message;
    EXPECT_NE(message.find("/nonexistent/libnvrtc.so.13 ("), std::string::npos) << message;
    EXPECT_NE(message.find("libfstitch-no-such-nvrtc.so ("), std::string::npos) << message;
    EXPECT_NE(message.find("No such file"), std::string::npos) << "carries dlerror's text: " << message;
    EXPECT_NE(message.find("set FSTITCH_CUDA_HOME"), std::string::npos) << message;
  }
}

TEST(NvrtcLoader, ALibraryWithoutTheEntryPointsIsSkipped) {
  try {
    load_nvrtc({"libm.so.6"});
    FAIL() << "expected kNoCompiler";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    EXPECT_NE(std::string(error.what()).find("libm.so.6 (loaded, but lacks nvrtcVersion"), std::string::npos)
        << error.what();
  }
  // Skipping it, the next candidate still loads.
  EXPECT_NE(load_nvrtc({"libm.so.6", "libnvrtc.so"}), nullptr);
}

TEST(NvrtcLoader, ACacheWithoutNvrtcIsCreatedButCannotCompile) {
  KernelCacheOptions options;
  options.nvrtc_candidates = {"/nonexistent/libnvrtc.so"};
  KernelCache cache(options);  // nothing is loaded yet: constructing must not fail
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() {}\n";
  try {
    cache.get(request);
    FAIL() << "expected kNoCompiler";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    EXPECT_NE(std::string(error.what()).find("/nonexistent/libnvrtc.so"), std::string::npos) << error.what();
  }
  try {
    cache.compile_all({request, request});
    FAIL() << "expected kNoCompiler";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
  }
  EXPECT_EQ(cache.stats().compiled, 0u);
}

}  // namespace
}  // namespace fstitch::jit
