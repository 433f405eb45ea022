// The simulated driver behind the stand-in: configuration, the objects it hands out
// (contexts, libraries, kernels, functions, streams, events, allocations) and the records
// tests read. One instance per loaded copy of the library, guarded by one mutex; each
// thread's context stack is thread-local, as in the real driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cuda/fake_cuda.h"
#include "runtime/cuda/driver_api.hpp"

// Entry points and control functions are the library's only exports.
#define FAKE_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace fake_cuda {

using fstitch::cuda::CUresult;

// CUresult values the stand-in returns (cuda.h's names).
inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kInvalidValue = 1;
inline constexpr CUresult kOutOfMemory = 2;
inline constexpr CUresult kNotInitialized = 3;
inline constexpr CUresult kInvalidDevice = 101;
inline constexpr CUresult kInvalidImage = 200;
inline constexpr CUresult kInvalidContext = 201;
inline constexpr CUresult kNoBinaryForGpu = 209;
inline constexpr CUresult kInvalidPtx = 218;
inline constexpr CUresult kInvalidHandle = 400;
inline constexpr CUresult kNotFound = 500;
inline constexpr CUresult kCooperativeLaunchTooLarge = 720;
inline constexpr CUresult kNotSupported = 801;

struct Config {
  CUresult init_result = kSuccess;
  int driver_version = 13000;
  int device_count = 1;
  int cc_major = 9;
  int cc_minor = 0;
  int multiprocessors = 132;
  int max_threads_per_block = 1024;
  int l2_bytes = 50 * 1024 * 1024;
  // An H200's memory: 6144-bit HBM3e at 3.2 GHz (4.9 TB/s); 0 = not reported.
  int memory_clock_khz = 3200000;
  int memory_bus_bits = 6144;
  int clock_khz = 1980000;
  bool cooperative_launch = true;
  bool memory_pools = true;
  int max_active_blocks = 4;
  bool reject_cubin = false;
  int registers_per_thread = 32;
  std::map<std::string, int> param_counts;      // kernel name -> parameters recorded per launch
  std::map<std::string, int> kernel_registers;  // kernel name -> registers per thread
};

struct Context {
  int device = 0;
  bool primary = false;
};

struct Library {
  bool is_cubin = false;
  std::set<std::string> entries;  // the kernels the image defines
  size_t record = 0;              // index into State::libraries; SIZE_MAX once cleared
  bool loaded = true;
};

struct Kernel {
  Library* library = nullptr;
  std::string name;
  int max_dynamic_shared_bytes = 48 * 1024;  // cuKernelSetAttribute raises it
};

struct Function {
  Kernel* kernel = nullptr;
  Context* context = nullptr;
};

struct Stream {
  bool destroyed = false;
};

struct Event {
  bool destroyed = false;
  bool recorded = false;
  uint64_t stamp = 0;
};

struct Allocation {
  size_t bytes = 0;
  size_t record = 0;  // index into State::allocations; SIZE_MAX once cleared
};

struct Injection {
  CUresult result = kSuccess;
  int skip = 0;       // calls that still succeed before the first failure
  int remaining = 0;  // failures left; negative: every call
};

class State {
 public:
  std::mutex mutex;
  Config config;
  bool initialized = false;

  // Owned objects; never destroyed while the library is loaded, so a stale handle is
  // recognized by looking it up instead of being read after free.
  std::vector<std::unique_ptr<Context>> contexts;
  std::map<int, Context*> primaries;
  std::map<int, int> primary_retains;
  std::vector<std::unique_ptr<Library>> library_objects;
  std::vector<std::unique_ptr<Kernel>> kernel_objects;
  std::vector<std::unique_ptr<Function>> function_objects;
  std::map<std::pair<const Kernel*, const Context*>, Function*> functions_by_context;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  std::map<uintptr_t, Allocation> live;  // address -> allocation
  uint64_t event_clock = 0;

  std::map<std::string, Injection> injections;

  // Records.
  std::vector<const char*> call_log;
  std::vector<fake_cuda_launch_record> launches;
  std::vector<fake_cuda_allocation_record> allocations;
  std::vector<fake_cuda_memset_record> memsets;
  std::vector<fake_cuda_library_record> libraries;

  // Logs a call to `entry_point` (a string literal) and returns its injected result, if any.
  CUresult enter(const char* entry_point);

  Context* find_context(const void* handle) const;
  Kernel* find_kernel(const void* handle) const;
  Function* find_function(const void* handle) const;
  Library* find_library(const void* handle) const;
  Stream* find_stream(const void* handle) const;
  // A live stream, the NULL stream, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD.
  bool has_stream(const void* handle) const;
  Event* find_event(const void* handle) const;
  Context* primary(int device);
  // Whether calls may run in `context`: a live one, and for a primary context, a retained
  // one (the real driver deactivates a primary context nobody retains).
  bool usable(const Context* context) const;
  // The allocation holding [address, address + bytes), or null.
  const Allocation* allocation_holding(uintptr_t address, size_t bytes) const;

  void clear_records();
  void reset();
};

// The instance of this copy of the library.
State& state();

// The start of every entry point: takes the state's lock for the call, logs the call, and
// settles its result early when a failure is injected or, for calls that need it, cuInit has
// not succeeded (CUDA_ERROR_NOT_INITIALIZED).
class Entry {
 public:
  explicit Entry(const char* entry_point, bool needs_init = true);
  State& s;
  std::unique_lock<std::mutex> lock;
  CUresult early = kSuccess;
};

// The calling thread's context stack (top: the current context).
std::vector<Context*>& context_stack();
inline Context* current_context() {
  auto& stack = context_stack();
  return stack.empty() ? nullptr : stack.back();
}

// The context calls run in: the current one when it is usable (not a primary context
// that is no longer retained), else null.
Context* usable_current_context(const State& s);

// Blocks of `block_size` threads with `dynamic_shared_bytes` that the simulated device keeps
// resident per multiprocessor for `kernel`: from its registers when a test set them
// (fake_cuda_set_kernel_registers), else config.max_active_blocks; 0 for a block too large.
int active_blocks(const State& s, const Kernel& kernel, int block_size, size_t dynamic_shared_bytes);

// Copies `text` into a fixed-size record field, truncating.
void copy_name(char (&field)[FAKE_CUDA_NAME_CAPACITY], const std::string& text);

}  // namespace fake_cuda
