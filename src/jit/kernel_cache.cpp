#include "jit/kernel_cache.hpp"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <utility>

#include "jit/cache_key.hpp"

namespace fstitch::jit {

KernelCache::KernelCache(KernelCacheOptions options) : options_(std::move(options)) {
  if (!options_.directory.empty() && options_.directory != "off") {
    disk_.emplace(options_.directory, options_.warn);
  }
}

std::shared_ptr<const Nvrtc> KernelCache::nvrtc() {
  if (options_.nvrtc_candidates.empty()) return system_nvrtc();
  std::lock_guard<std::mutex> lock(nvrtc_mutex_);
  if (!nvrtc_) nvrtc_ = load_nvrtc(options_.nvrtc_candidates);
  return nvrtc_;
}

std::string KernelCache::key_for(const CompileRequest& request) {
  return cache_key(nvrtc()->version_string(), request);
}

ModulePtr KernelCache::get(const CompileRequest& request, CompileStats* counted) {
  const std::shared_ptr<const Nvrtc> compiler = nvrtc();
  const std::string key = cache_key(compiler->version_string(), request);

  std::promise<ModulePtr> promise;
  {
    std::unique_lock<std::mutex> lock(entries_mutex_);
    auto found = entries_.find(key);
    if (found != entries_.end()) {
      std::shared_future<ModulePtr> pending = found->second;
      lock.unlock();
      ModulePtr module = pending.get();  // waits when another thread is still compiling this key
      CompileStats hit;
      hit.memory_hits = 1;
      record(hit, counted);
      return module;
    }
    entries_.emplace(key, promise.get_future().share());
  }

  CompileStats done;
  try {
    ModulePtr module = load_or_compile(*compiler, request, key, done);
    record(done, counted);
    promise.set_value(module);
    return module;
  } catch (...) {
    record(done, counted);  // a discarded disk entry stays counted when the compile then fails
    {
      std::lock_guard<std::mutex> lock(entries_mutex_);
      entries_.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

ModulePtr KernelCache::load_or_compile(const Nvrtc& compiler, const CompileRequest& request,
                                       const std::string& key, CompileStats& counted) {
  if (disk_) {
    bool discarded = false;
    std::optional<CompiledModule> stored = disk_->load(key, &discarded);
    if (discarded) ++counted.disk_discards;
    if (stored) {
      ++counted.disk_hits;
      return std::make_shared<const CompiledModule>(std::move(*stored));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto module = std::make_shared<const CompiledModule>(compile_program(compiler, request));
  ++counted.compiled;
  counted.compile_nanoseconds += nanoseconds_since(start);
  if (disk_ && disk_writable_.load()) {
    if (disk_->store(key, *module)) {
      ++counted.disk_writes;
    } else {
      disk_writable_.store(false);  // DiskCache has warned; stay memory-only from here on
    }
  }
  return module;
}

std::vector<ModulePtr> KernelCache::compile_all(const std::vector<CompileRequest>& requests,
                                                CompileStats* counted) {
  std::vector<ModulePtr> modules(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  std::vector<CompileStats> each(requests.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t index = next++; index < requests.size(); index = next++) {
      try {
        modules[index] = get(requests[index], &each[index]);
      } catch (...) {
        errors[index] = std::current_exception();
      }
    }
  };

  unsigned limit = options_.max_parallel_compiles != 0 ? options_.max_parallel_compiles
                                                       : std::thread::hardware_concurrency();
  limit = std::max(limit, 1u);
  const std::size_t helpers = std::min<std::size_t>(limit, requests.size()) - (requests.empty() ? 0 : 1);
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (std::size_t i = 0; i < helpers; ++i) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads available: the ones started and this thread do the rest
    }
  }
  work();
  for (std::thread& thread : threads) thread.join();
  if (counted != nullptr) {
    for (const CompileStats& one : each) *counted += one;
  }

  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return modules;
}

void KernelCache::record(const CompileStats& done, CompileStats* counted) {
  stats_.add(done);
  if (counted != nullptr) *counted += done;
}

CompileStats KernelCache::stats() const {
  return stats_.load();
}

bool KernelCache::disk_enabled() const {
  return disk_.has_value() && disk_writable_.load();
}

}  // namespace fstitch::jit
