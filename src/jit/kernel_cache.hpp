// The kernel cache: compiled modules by cache key, in memory and on disk, and parallel
// compilation of a plan's kernels.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/compile.hpp"
#include "jit/disk_cache.hpp"
#include "jit/nvrtc_loader.hpp"
#include "support/compile_stats.hpp"

namespace fstitch::jit {

using ModulePtr = std::shared_ptr<const CompiledModule>;

struct KernelCacheOptions {
  // The on-disk cache directory (created on first use); "off" or "" keeps modules in
  // memory only.
  std::string directory = "off";
  // Receives warnings about corrupt entries and unwritable directories; may be empty.
  WarningSink warn;
  // Libraries to load NVRTC from, in order; empty: system_nvrtc() (default_nvrtc_candidates).
  std::vector<std::string> nvrtc_candidates;
  // Most compiles compile_all runs at once; 0: std::thread::hardware_concurrency().
  unsigned max_parallel_compiles = 0;
};

// Thread-safe: any number of threads may request modules at once; concurrent requests for
// one key compile it once. NVRTC is loaded at the first request, not at construction.
class KernelCache {
 public:
  explicit KernelCache(KernelCacheOptions options);
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The module for `request`: from memory, else from disk, else compiled (and stored).
  // Throws Error(kNoCompiler) without NVRTC, Error(kCompile) with the log when the source
  // does not compile, Error(kInvalidArgument) for a bad arch or option. Failures are not
  // cached: a later request compiles again. `counted`, when given, receives what this
  // request did (added to it; compiled counts NVRTC compiles that succeeded).
  ModulePtr get(const CompileRequest& request, CompileStats* counted = nullptr);

  // get() for every request, the misses compiled concurrently (at most
  // max_parallel_compiles at once, the calling thread included). Results are in request
  // order. After every compile has finished, rethrows the error of the first failing
  // request in order. `counted`, when given, receives what these requests did (added to it).
  std::vector<ModulePtr> compile_all(const std::vector<CompileRequest>& requests,
                                     CompileStats* counted = nullptr);

  // The key get() files `request` under (loads NVRTC for its version).
  std::string key_for(const CompileRequest& request);

  // What every request so far did.
  CompileStats stats() const;

  // The NVRTC its compiles use, loaded on first use; throws Error(kNoCompiler) when none loads.
  std::shared_ptr<const Nvrtc> nvrtc();
  // True while modules are also read from and written to disk.
  bool disk_enabled() const;

 private:
  ModulePtr load_or_compile(const Nvrtc& nvrtc, const CompileRequest& request, const std::string& key,
                            CompileStats& counted);
  // Adds what one request did to the cache's counters and to the caller's `counted`, if any.
  void record(const CompileStats& done, CompileStats* counted);

  KernelCacheOptions options_;
  std::optional<DiskCache> disk_;
  std::atomic<bool> disk_writable_{true};

  std::mutex nvrtc_mutex_;
  std::shared_ptr<const Nvrtc> nvrtc_;

  std::mutex entries_mutex_;
  // Finished and in-flight modules; a failed compile's entry is removed.
  std::unordered_map<std::string, std::shared_future<ModulePtr>> entries_;

  AtomicCompileStats stats_;
};

}  // namespace fstitch::jit
