// The fake_cuda_* functions (fake_cuda.h): how tests configure the stand-in driver and read
// its records.
#include <cstring>
#include <mutex>

#include "cuda/fake_state.hpp"

namespace {

// The state with its lock held for one control call.
struct Locked {
  fake_cuda::State& s = fake_cuda::state();
  std::lock_guard<std::mutex> lock{s.mutex};
};

template <class Record>
int copy_record(const std::vector<Record>& records, size_t index, Record* out) {
  if (out == nullptr || index >= records.size()) return 0;
  *out = records[index];
  return 1;
}

}  // namespace

FAKE_CUDA_EXPORT void fake_cuda_reset(void) {
  Locked l;
  l.s.reset();
}

FAKE_CUDA_EXPORT void fake_cuda_set_init_result(int result) {
  Locked l;
  l.s.config.init_result = result;
}

FAKE_CUDA_EXPORT void fake_cuda_set_driver_version(int version) {
  Locked l;
  l.s.config.driver_version = version;
}

FAKE_CUDA_EXPORT void fake_cuda_set_device_count(int count) {
  Locked l;
  l.s.config.device_count = count;
}

FAKE_CUDA_EXPORT void fake_cuda_set_compute_capability(int major, int minor) {
  Locked l;
  l.s.config.cc_major = major;
  l.s.config.cc_minor = minor;
}

FAKE_CUDA_EXPORT void fake_cuda_set_multiprocessors(int count) {
  Locked l;
  l.s.config.multiprocessors = count;
}

FAKE_CUDA_EXPORT void fake_cuda_set_max_threads_per_block(int threads) {
  Locked l;
  l.s.config.max_threads_per_block = threads;
}

FAKE_CUDA_EXPORT void fake_cuda_set_cooperative_launch(int supported) {
  Locked l;
  l.s.config.cooperative_launch = supported != 0;
}

FAKE_CUDA_EXPORT void fake_cuda_set_memory_pools(int supported) {
  Locked l;
  l.s.config.memory_pools = supported != 0;
}

FAKE_CUDA_EXPORT void fake_cuda_set_max_active_blocks(int blocks_per_multiprocessor) {
  Locked l;
  l.s.config.max_active_blocks = blocks_per_multiprocessor;
}

FAKE_CUDA_EXPORT void fake_cuda_set_kernel_registers(const char* kernel, int registers) {
  Locked l;
  if (kernel == nullptr) return;
  if (registers <= 0) {
    l.s.config.kernel_registers.erase(kernel);
  } else {
    l.s.config.kernel_registers[kernel] = registers;
  }
}

FAKE_CUDA_EXPORT void fake_cuda_set_reject_cubin(int reject) {
  Locked l;
  l.s.config.reject_cubin = reject != 0;
}

FAKE_CUDA_EXPORT void fake_cuda_set_param_count(const char* kernel, int count) {
  if (kernel == nullptr) return;
  Locked l;
  l.s.config.param_counts[kernel] = count;
}

FAKE_CUDA_EXPORT void fake_cuda_inject_after(const char* entry_point, int successes, int result, int times) {
  if (entry_point == nullptr) return;
  Locked l;
  if (times == 0) {
    l.s.injections.erase(entry_point);
  } else {
    l.s.injections[entry_point] = {result, successes, times};
  }
}

FAKE_CUDA_EXPORT void fake_cuda_inject(const char* entry_point, int result, int times) {
  fake_cuda_inject_after(entry_point, 0, result, times);
}

FAKE_CUDA_EXPORT void* fake_cuda_new_context(int device) {
  Locked l;
  l.s.contexts.push_back(std::make_unique<fake_cuda::Context>());
  l.s.contexts.back()->device = device;
  return l.s.contexts.back().get();
}

FAKE_CUDA_EXPORT void* fake_cuda_primary_context(int device) {
  Locked l;
  return l.s.primary(device);
}

FAKE_CUDA_EXPORT int fake_cuda_primary_retain_count(int device) {
  Locked l;
  auto found = l.s.primary_retains.find(device);
  return found == l.s.primary_retains.end() ? 0 : found->second;
}

FAKE_CUDA_EXPORT int fake_cuda_describe_function(void* function, void** out_context, char* out_kernel) {
  Locked l;
  const fake_cuda::Function* f = l.s.find_function(function);
  if (f == nullptr) return 0;
  if (out_context != nullptr) *out_context = f->context;
  if (out_kernel != nullptr) {
    char name[FAKE_CUDA_NAME_CAPACITY];
    fake_cuda::copy_name(name, f->kernel->name);
    std::memcpy(out_kernel, name, sizeof name);
  }
  return 1;
}

FAKE_CUDA_EXPORT void* fake_cuda_current_context(void) {
  return fake_cuda::current_context();
}

FAKE_CUDA_EXPORT int fake_cuda_context_stack_depth(void) {
  return static_cast<int>(fake_cuda::context_stack().size());
}

FAKE_CUDA_EXPORT void fake_cuda_clear_records(void) {
  Locked l;
  l.s.clear_records();
}

FAKE_CUDA_EXPORT size_t fake_cuda_call_log(const char** names, size_t capacity) {
  Locked l;
  if (names != nullptr) {
    for (size_t i = 0; i < capacity && i < l.s.call_log.size(); ++i) names[i] = l.s.call_log[i];
  }
  return l.s.call_log.size();
}

FAKE_CUDA_EXPORT size_t fake_cuda_call_count(const char* entry_point) {
  if (entry_point == nullptr) return 0;
  Locked l;
  size_t count = 0;
  for (const char* name : l.s.call_log) count += std::strcmp(name, entry_point) == 0 ? 1 : 0;
  return count;
}

FAKE_CUDA_EXPORT size_t fake_cuda_launch_count(void) {
  Locked l;
  return l.s.launches.size();
}

FAKE_CUDA_EXPORT int fake_cuda_launch(size_t index, fake_cuda_launch_record* out) {
  Locked l;
  return copy_record(l.s.launches, index, out);
}

FAKE_CUDA_EXPORT size_t fake_cuda_allocation_count(void) {
  Locked l;
  return l.s.allocations.size();
}

FAKE_CUDA_EXPORT int fake_cuda_allocation(size_t index, fake_cuda_allocation_record* out) {
  Locked l;
  return copy_record(l.s.allocations, index, out);
}

FAKE_CUDA_EXPORT size_t fake_cuda_memset_count(void) {
  Locked l;
  return l.s.memsets.size();
}

FAKE_CUDA_EXPORT int fake_cuda_memset(size_t index, fake_cuda_memset_record* out) {
  Locked l;
  return copy_record(l.s.memsets, index, out);
}

FAKE_CUDA_EXPORT size_t fake_cuda_live_allocation_count(void) {
  Locked l;
  return l.s.live.size();
}

FAKE_CUDA_EXPORT size_t fake_cuda_library_count(void) {
  Locked l;
  return l.s.libraries.size();
}

FAKE_CUDA_EXPORT int fake_cuda_library(size_t index, fake_cuda_library_record* out) {
  Locked l;
  return copy_record(l.s.libraries, index, out);
}
