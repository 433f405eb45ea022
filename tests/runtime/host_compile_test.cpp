// Compiling generated text with the host compiler: the disk cache (a hit runs no compiler
// process; a corrupt entry is rebuilt), compile errors with the compiler's log, a missing
// compiler, and the pieces underneath: process spawning, cache keys, worker count parsing.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "host_test_support.hpp"
#include "runtime/host/compiler.hpp"
#include "runtime/host/object_cache.hpp"
#include "runtime/host/process.hpp"
#include "runtime/host/worker_pool.hpp"

namespace fstitch::host::testing {
namespace {

namespace fs = std::filesystem;

TEST(HostCompile, TheSecondCompileOfATextComesFromTheDiskCache) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  const std::uint64_t before = host_compiler_process_count();
  const auto first = HostModule::compile(kSmallKernel, options);
  EXPECT_FALSE(first->loaded_from_cache());
  EXPECT_GE(host_compiler_process_count(), before + 1);
  expect_fills(*first);

  const std::uint64_t after_first = host_compiler_process_count();
  const auto second = HostModule::compile(kSmallKernel, options);
  EXPECT_TRUE(second->loaded_from_cache());
  EXPECT_EQ(host_compiler_process_count(), after_first) << "a cache hit must run no compiler process";
  EXPECT_EQ(fs::path(second->object_path()).parent_path(), fs::path(cache.path()) / "host");
  expect_fills(*second);

  // Another text is another entry.
  const auto other = HostModule::compile(std::string(kSmallKernel) + "\n// another text\n", options);
  EXPECT_FALSE(other->loaded_from_cache());
  EXPECT_NE(other->object_path(), second->object_path());
}

TEST(HostCompile, ACorruptCacheEntryIsRebuilt) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  const std::string path = HostModule::compile(kSmallKernel, options)->object_path();
  {
    std::ofstream corrupt(path, std::ios::binary | std::ios::trunc);
    corrupt << "not an object file";
  }
  const std::uint64_t before = host_compiler_process_count();
  const auto rebuilt = HostModule::compile(kSmallKernel, options);
  EXPECT_FALSE(rebuilt->loaded_from_cache());
  EXPECT_EQ(host_compiler_process_count(), before + 1);
  expect_fills(*rebuilt);
}

TEST(HostCompile, WithoutTheDiskCacheNothingIsKept) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  options.disk_cache = false;
  const auto module = HostModule::compile(kSmallKernel, options);
  EXPECT_FALSE(module->loaded_from_cache());
  EXPECT_FALSE(fs::exists(module->object_path()));
  EXPECT_FALSE(fs::exists(fs::path(cache.path()) / "host"));
  expect_fills(*module);
}

TEST(HostCompile, CompileErrorsCarryTheCommandAndTheLog) {
  const CacheFolder cache;
  HostCompileOptions options;
  options.cache_dir = cache.path();
  const Error error = catch_error([&] {
    HostModule::compile(
        "extern \"C\" __global__ void fst_bad(float* y) { y[0] = undeclared_thing; }\n"
        "FST_HOST_ENTRY(fst_bad)\n",
        options);
  });
  EXPECT_EQ(error.code(), StatusCode::kCompile);
  EXPECT_CONTAINS(error.what(), " failed:\n");
  EXPECT_CONTAINS(error.what(), "-include");
  EXPECT_CONTAINS(error.what(), "undeclared_thing");
  // Nothing from a failed compile stays in the cache.
  std::size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(cache.path()) / "host")) entries += entry.exists();
  EXPECT_EQ(entries, 0u);
}

TEST(HostCompile, AMissingCompilerIsReported) {
  {
    const ScopedEnvironment cxx("FSTITCH_HOST_CXX", "/nonexistent/bin/c++");
    const Error error = catch_error([] { HostModule::compile(kSmallKernel); });
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    EXPECT_CONTAINS(error.what(), "FSTITCH_HOST_CXX='/nonexistent/bin/c++' is not an executable file");
  }
  {
    const ScopedEnvironment cxx("FSTITCH_HOST_CXX", "fstitch-no-such-compiler");
    EXPECT_EQ(catch_error([] { HostModule::compile(kSmallKernel); }).code(), StatusCode::kNoCompiler);
  }
  {
    const ScopedEnvironment cxx("FSTITCH_HOST_CXX", "/bin/false");  // runs, but is no compiler
    const Error error = catch_error([] { HostModule::compile(kSmallKernel); });
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    EXPECT_CONTAINS(error.what(), "--version' failed");
  }
  {
    const ScopedEnvironment cxx("FSTITCH_HOST_CXX", "");  // empty counts as unset
    const ScopedEnvironment path("PATH", "/nonexistent");
    const Error error = catch_error([] { HostModule::compile(kSmallKernel); });
    EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
    EXPECT_CONTAINS(error.what(), "none of c++, g++, clang++ is on PATH");
  }
}

TEST(HostProcess, RunsWithoutAShellAndCapturesBothStreams) {
  const ProcessResult result = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.spawn_error, 0);
  EXPECT_TRUE(result.exited);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_CONTAINS(result.output.c_str(), "out\n");
  EXPECT_CONTAINS(result.output.c_str(), "err\n");
  // Arguments reach the program as they are: no word splitting, no expansion.
  const ProcessResult echo = run_process({"/bin/echo", "a b", "$HOME", "; ls"});
  EXPECT_EQ(echo.output, "a b $HOME ; ls\n");
  // A program that cannot be started: posix_spawn reports it, or (where exec failures are not
  // passed back, as under Valgrind) the child exits with 127.
  const ProcessResult missing = run_process({"/nonexistent/program"});
  EXPECT_TRUE(missing.spawn_error != 0 || (missing.exited && missing.exit_status == 127));
  EXPECT_EQ(command_text({"/usr/bin/g++", "-o", "a b", "it's"}), "/usr/bin/g++ -o 'a b' 'it'\\''s'");
}

TEST(HostObjectKey, FnvValuesAndPartBoundaries) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_NE(host_object_key({"ab", "c"}), host_object_key({"a", "bc"}));
  EXPECT_EQ(host_object_key({"ab", "c"}), host_object_key({"ab", "c"}));
  EXPECT_EQ(host_object_key({"x"}).size(), 16u);
}

TEST(HostWorkers, TheWorkerCountComesFromTheEnvironment) {
  {
    const ScopedEnvironment threads("FSTITCH_HOST_THREADS", "3");
    EXPECT_EQ(host_worker_count_from_environment(), 3u);
  }
  for (const char* bad : {"0", "abc", "2x", "-1", "100000"}) {
    const ScopedEnvironment threads("FSTITCH_HOST_THREADS", bad);
    const Error error = catch_error([] { host_worker_count_from_environment(); });
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_CONTAINS(error.what(), "FSTITCH_HOST_THREADS");
  }
}

}  // namespace
}  // namespace fstitch::host::testing
