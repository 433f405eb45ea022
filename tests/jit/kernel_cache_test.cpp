// The kernel cache with real NVRTC compiles: memory and disk hits, corrupt entries,
// disabled and unwritable disk caches, concurrency and compile_all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jit/kernel_cache.hpp"
#include "jit_test_support.hpp"
#include "support/error.hpp"

namespace fstitch::jit {
namespace {

using testing::directory_entries;
using testing::read_file;
using testing::ScratchDir;
using testing::single_kernel_source;
using testing::write_file;

CompileRequest request_for(const std::string& kernel, int factor, int arch = 80) {
  CompileRequest request;
  request.source = single_kernel_source(kernel, factor);
  request.name = kernel + ".cu";
  request.arch = arch;
  return request;
}

// Collects warnings from any thread.
struct WarningLog {
  std::mutex mutex;
  std::vector<std::string> messages;
  WarningSink sink() {
    return [this](const std::string& message) {
      std::lock_guard<std::mutex> lock(mutex);
      messages.push_back(message);
    };
  }
};

KernelCacheOptions disk_options(const std::string& directory, WarningLog* warnings = nullptr) {
  KernelCacheOptions options;
  options.directory = directory;
  if (warnings != nullptr) options.warn = warnings->sink();
  return options;
}

// The code of two compiles of one request is identical; their logs differ in ptxas's
// reported compile time.
void expect_same_code(const CompiledModule& a, const CompiledModule& b) {
  EXPECT_EQ(a.ptx, b.ptx);
  EXPECT_EQ(a.cubin, b.cubin);
  EXPECT_EQ(a.resources.size(), b.resources.size());
}

TEST(KernelCache, SecondRequestHitsMemory) {
  KernelCache cache(KernelCacheOptions{});
  const CompileRequest request = request_for("fst_mem", 3);
  const ModulePtr first = cache.get(request);
  const ModulePtr second = cache.get(request);
  EXPECT_EQ(first, second) << "the same module object";
  EXPECT_NE(first->ptx.find(".entry fst_mem("), std::string::npos);
  const CompileStats stats = cache.stats();
  EXPECT_EQ(stats.compiled, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_FALSE(cache.disk_enabled());

  // A different arch is a different module.
  const ModulePtr sm90 = cache.get(request_for("fst_mem", 3, 90));
  EXPECT_NE(sm90->ptx.find(".target sm_90"), std::string::npos);
  EXPECT_EQ(cache.stats().compiled, 2u);
}

TEST(KernelCache, AFreshCacheOnTheSameDirectoryHitsDisk) {
  ScratchDir scratch;
  const CompileRequest request = request_for("fst_disk", 4);
  ModulePtr compiled;
  std::string key;
  {
    KernelCache cache(disk_options(scratch.path()));
    compiled = cache.get(request);
    key = cache.key_for(request);
    EXPECT_EQ(cache.stats().compiled, 1u);
    EXPECT_EQ(cache.stats().disk_writes, 1u);
    EXPECT_TRUE(cache.disk_enabled());
  }
  EXPECT_EQ(directory_entries(scratch.path()), std::vector<std::string>{key + ".fstk"});

  KernelCache fresh(disk_options(scratch.path()));
  const ModulePtr loaded = fresh.get(request);
  expect_same_code(*loaded, *compiled);
  EXPECT_EQ(loaded->log, compiled->log) << "the log is stored too";
  EXPECT_NE(find_function(loaded->resources, "fst_disk"), nullptr) << "resources come back with the log";
  CompileStats stats = fresh.stats();
  EXPECT_EQ(stats.disk_hits, 1u);
  EXPECT_EQ(stats.compiled, 0u);

  fresh.get(request);
  stats = fresh.stats();
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.disk_hits, 1u);
}

// Damages the entry written by one cache and checks that a fresh cache discards it,
// recompiles, and rewrites a good entry.
void check_recovery_from(const std::string& what, void (*damage)(std::string* bytes)) {
  SCOPED_TRACE(what);
  ScratchDir scratch;
  const CompileRequest request = request_for("fst_corrupt", 5);
  ModulePtr original;
  std::string path;
  {
    KernelCache cache(disk_options(scratch.path()));
    original = cache.get(request);
    path = scratch.path() + "/" + cache.key_for(request) + ".fstk";
  }
  std::string bytes = read_file(path);
  damage(&bytes);
  write_file(path, bytes);

  WarningLog warnings;
  KernelCache cache(disk_options(scratch.path(), &warnings));
  const ModulePtr recompiled = cache.get(request);
  expect_same_code(*recompiled, *original);
  const CompileStats stats = cache.stats();
  EXPECT_EQ(stats.disk_discards, 1u);
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.compiled, 1u);
  EXPECT_EQ(stats.disk_writes, 1u);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("is corrupt"), std::string::npos) << warnings.messages[0];
  EXPECT_NE(warnings.messages[0].find(path), std::string::npos) << warnings.messages[0];

  KernelCache after(disk_options(scratch.path()));
  after.get(request);
  EXPECT_EQ(after.stats().disk_hits, 1u) << "the rewritten entry is good";
}

TEST(KernelCache, AFlippedByteIsDiscardedAndRecompiled) {
  check_recovery_from("flip a byte in the middle", [](std::string* bytes) {
    (*bytes)[bytes->size() / 2] = static_cast<char>((*bytes)[bytes->size() / 2] ^ 0x5a);
  });
}

TEST(KernelCache, ATruncatedEntryIsDiscardedAndRecompiled) {
  check_recovery_from("truncate to 100 bytes", [](std::string* bytes) { bytes->resize(100); });
  check_recovery_from("truncate inside the header", [](std::string* bytes) { bytes->resize(20); });
  check_recovery_from("empty file", [](std::string* bytes) { bytes->clear(); });
}

TEST(KernelCache, OffWritesNothing) {
  ScratchDir scratch;
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(scratch.path());  // "off" must not become a relative directory
  {
    KernelCacheOptions options;
    options.directory = "off";
    KernelCache cache(options);
    cache.get(request_for("fst_off", 6));
    EXPECT_FALSE(cache.disk_enabled());
    EXPECT_EQ(cache.stats().disk_writes, 0u);
  }
  std::filesystem::current_path(previous);
  EXPECT_TRUE(directory_entries(scratch.path()).empty());
}

TEST(KernelCache, AnUnwritableDirectoryStillCompiles) {
  ScratchDir scratch;
  write_file(scratch.path() + "/plain-file", "a file where the cache directory should go");
  WarningLog warnings;
  KernelCache cache(disk_options(scratch.path() + "/plain-file/cache", &warnings));
  const ModulePtr module = cache.get(request_for("fst_unwritable", 7));
  EXPECT_FALSE(module->cubin.empty());
  EXPECT_FALSE(cache.disk_enabled()) << "degraded to memory only";
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("memory only"), std::string::npos) << warnings.messages[0];

  cache.get(request_for("fst_unwritable", 7));
  cache.get(request_for("fst_unwritable_too", 8));
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_EQ(cache.stats().compiled, 2u);
  EXPECT_EQ(warnings.messages.size(), 1u) << "warned once";
}

TEST(KernelCache, AReadOnlyDirectoryStillCompiles) {
  if (geteuid() == 0) GTEST_SKIP() << "permissions do not stop root";
  ScratchDir scratch;
  std::filesystem::permissions(scratch.path(),
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  WarningLog warnings;
  KernelCache cache(disk_options(scratch.path(), &warnings));
  EXPECT_FALSE(cache.get(request_for("fst_read_only", 9))->cubin.empty());
  EXPECT_FALSE(cache.disk_enabled());
  EXPECT_EQ(warnings.messages.size(), 1u);
}

TEST(KernelCache, ConcurrentRequestsForOneKeyCompileOnce) {
  KernelCache cache(KernelCacheOptions{});
  const CompileRequest request = request_for("fst_concurrent", 10);
  std::vector<ModulePtr> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = cache.get(request); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const ModulePtr& result : results) EXPECT_EQ(result, results[0]);
  EXPECT_EQ(cache.stats().compiled, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 3u);
}

TEST(KernelCache, CompileAllReturnsModulesInRequestOrder) {
  ScratchDir scratch;
  const std::vector<std::string> kernels = {"fst_all_a", "fst_all_b", "fst_all_c", "fst_all_d"};
  std::vector<CompileRequest> requests;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    requests.push_back(request_for(kernels[i], static_cast<int>(i) + 11));

  KernelCache cache(disk_options(scratch.path()));
  const std::vector<ModulePtr> modules = cache.compile_all(requests);
  ASSERT_EQ(modules.size(), kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    ASSERT_NE(modules[i], nullptr);
    for (std::size_t j = 0; j < kernels.size(); ++j) {
      EXPECT_EQ(modules[i]->ptx.find(".entry " + kernels[j] + "(") != std::string::npos, i == j)
          << "module " << i << ", kernel " << kernels[j];
    }
    // factor i + 11 appears as a float immediate in the PTX
    EXPECT_NE(find_function(modules[i]->resources, kernels[i]), nullptr);
  }
  EXPECT_EQ(cache.stats().compiled, 4u);
  EXPECT_EQ(directory_entries(scratch.path()).size(), 4u);

  // Again: all from memory, still in order.
  const std::vector<ModulePtr> again = cache.compile_all(requests);
  EXPECT_EQ(again, modules);
  EXPECT_EQ(cache.stats().memory_hits, 4u);
  EXPECT_TRUE(cache.compile_all({}).empty());
}

TEST(KernelCache, CompileAllRethrowsTheFirstErrorAfterFinishingTheRest) {
  KernelCacheOptions options;
  options.max_parallel_compiles = 2;
  KernelCache cache(options);
  CompileRequest broken_one = request_for("fst_broken_one", 1);
  broken_one.source += "this is not CUDA;\n";
  CompileRequest broken_two = request_for("fst_broken_two", 2);
  broken_two.source += "neither is this;\n";
  const std::vector<CompileRequest> requests = {request_for("fst_fine_a", 21), broken_one,
                                                request_for("fst_fine_b", 22), broken_two};
  try {
    cache.compile_all(requests);
    FAIL() << "expected kCompile";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kCompile);
    EXPECT_NE(std::string(error.what()).find("fst_broken_one.cu"), std::string::npos)
        << "the first failing request in order: " << error.what();
  }
  EXPECT_EQ(cache.stats().compiled, 2u) << "the good kernels were compiled and kept";
  cache.get(requests[0]);
  cache.get(requests[2]);
  EXPECT_EQ(cache.stats().memory_hits, 2u);

  // A failure is not cached: the same broken request fails again.
  EXPECT_THROW(cache.get(broken_one), Error);
}

}  // namespace
}  // namespace fstitch::jit
