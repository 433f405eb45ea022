// What kernel compilation did: modules compiled, found in memory, loaded from or written to
// the disk cache, and the time the compiles took. The NVRTC kernel cache and the host
// backend's module cache count the same things, so a context and a fusion report both
// through fst_context_compile_stat() and fst_fusion_compile_stat().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace fstitch {

struct CompileStats {
  uint64_t compiled = 0;             // modules compiled (NVRTC: one per kernel; host: one per fusion)
  uint64_t memory_hits = 0;          // served from memory, including waits on a concurrent compile
  uint64_t disk_hits = 0;            // read and verified from the disk cache
  uint64_t disk_writes = 0;          // entries written to the disk cache
  uint64_t disk_discards = 0;        // corrupt or unloadable disk entries deleted
  uint64_t compile_nanoseconds = 0;  // wall time of the compiles, summed over parallel ones

  CompileStats& operator+=(const CompileStats& other) {
    compiled += other.compiled;
    memory_hits += other.memory_hits;
    disk_hits += other.disk_hits;
    disk_writes += other.disk_writes;
    disk_discards += other.disk_discards;
    compile_nanoseconds += other.compile_nanoseconds;
    return *this;
  }
};

// CompileStats that many threads add to at once; load() reads each counter atomically (a
// reader racing with an add may see part of that add).
class AtomicCompileStats {
 public:
  void add(const CompileStats& s) {
    compiled_ += s.compiled;
    memory_hits_ += s.memory_hits;
    disk_hits_ += s.disk_hits;
    disk_writes_ += s.disk_writes;
    disk_discards_ += s.disk_discards;
    compile_nanoseconds_ += s.compile_nanoseconds;
  }
  CompileStats load() const {
    CompileStats s;
    s.compiled = compiled_.load();
    s.memory_hits = memory_hits_.load();
    s.disk_hits = disk_hits_.load();
    s.disk_writes = disk_writes_.load();
    s.disk_discards = disk_discards_.load();
    s.compile_nanoseconds = compile_nanoseconds_.load();
    return s;
  }

 private:
  std::atomic<uint64_t> compiled_{0};
  std::atomic<uint64_t> memory_hits_{0};
  std::atomic<uint64_t> disk_hits_{0};
  std::atomic<uint64_t> disk_writes_{0};
  std::atomic<uint64_t> disk_discards_{0};
  std::atomic<uint64_t> compile_nanoseconds_{0};
};

// Nanoseconds since `start` on the steady clock.
inline uint64_t nanoseconds_since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace fstitch
