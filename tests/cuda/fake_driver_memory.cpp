// Entry points of the stand-in driver: device memory (host memory from malloc, so copies and
// memsets work on it), streams and events. Every call completes at once, so "async" calls
// are done when they return and synchronization only needs to be counted.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cuda/fake_state.hpp"

using fake_cuda::CUresult;
using fake_cuda::Entry;
using fstitch::cuda::CUdeviceptr;
using fstitch::cuda::CUevent;
using fstitch::cuda::CUstream;

namespace {

CUresult allocate(fake_cuda::State& s, CUdeviceptr* address, size_t bytes, bool async, CUstream stream) {
  if (address == nullptr || bytes == 0) return fake_cuda::kInvalidValue;
  if (fake_cuda::usable_current_context(s) == nullptr) return fake_cuda::kInvalidContext;
  if (async && !s.config.memory_pools) return fake_cuda::kNotSupported;
  if (async && !s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  void* memory = std::malloc(bytes);
  if (memory == nullptr) return fake_cuda::kOutOfMemory;
  const auto base = reinterpret_cast<uintptr_t>(memory);
  fake_cuda_allocation_record r{};
  r.address = base;
  r.bytes = bytes;
  r.async = async ? 1 : 0;
  r.stream = stream;
  r.call_index = s.call_log.size() - 1;
  s.live[base] = {bytes, s.allocations.size()};
  s.allocations.push_back(r);
  *address = base;
  return fake_cuda::kSuccess;
}

CUresult release(fake_cuda::State& s, CUdeviceptr address, bool async, CUstream stream) {
  if (fake_cuda::usable_current_context(s) == nullptr) return fake_cuda::kInvalidContext;
  auto found = s.live.find(static_cast<uintptr_t>(address));
  if (found == s.live.end()) return fake_cuda::kInvalidValue;
  if (async && !s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  if (found->second.record < s.allocations.size()) {
    fake_cuda_allocation_record& r = s.allocations[found->second.record];
    r.freed = 1;
    r.free_async = async ? 1 : 0;
    r.free_stream = stream;
    r.free_call_index = s.call_log.size() - 1;
  }
  std::free(reinterpret_cast<void*>(found->first));
  s.live.erase(found);
  return fake_cuda::kSuccess;
}

// The host address behind [address, address + bytes) of one live allocation, or null.
void* device_range(const fake_cuda::State& s, CUdeviceptr address, size_t bytes) {
  if (s.allocation_holding(static_cast<uintptr_t>(address), bytes) == nullptr) return nullptr;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* address, size_t bytes) {
  Entry call("cuMemAlloc_v2");
  if (call.early) return call.early;
  return allocate(call.s, address, bytes, false, nullptr);
}

FAKE_CUDA_EXPORT CUresult cuMemFree_v2(CUdeviceptr address) {
  Entry call("cuMemFree_v2");
  if (call.early) return call.early;
  return release(call.s, address, false, nullptr);
}

FAKE_CUDA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* address, size_t bytes, CUstream stream) {
  Entry call("cuMemAllocAsync");
  if (call.early) return call.early;
  return allocate(call.s, address, bytes, true, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr address, CUstream stream) {
  Entry call("cuMemFreeAsync");
  if (call.early) return call.early;
  return release(call.s, address, true, stream);
}

FAKE_CUDA_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, size_t bytes) {
  Entry call("cuMemcpyHtoD_v2");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  void* target = device_range(call.s, destination, bytes);
  if (target == nullptr || source == nullptr) return fake_cuda::kInvalidValue;
  std::memcpy(target, source, bytes);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t bytes) {
  Entry call("cuMemcpyDtoH_v2");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  void* from = device_range(call.s, source, bytes);
  if (from == nullptr || destination == nullptr) return fake_cuda::kInvalidValue;
  std::memcpy(destination, from, bytes);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr destination, CUdeviceptr source, size_t bytes,
                                               CUstream stream) {
  Entry call("cuMemcpyDtoDAsync_v2");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  if (!call.s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  void* target = device_range(call.s, destination, bytes);
  void* from = device_range(call.s, source, bytes);
  if (target == nullptr || from == nullptr) return fake_cuda::kInvalidValue;
  std::memmove(target, from, bytes);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuMemsetD8Async(CUdeviceptr destination, unsigned char value, size_t count,
                                          CUstream stream) {
  Entry call("cuMemsetD8Async");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  if (!call.s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  void* target = device_range(call.s, destination, count);
  if (target == nullptr) return fake_cuda::kInvalidValue;
  std::memset(target, value, count);
  fake_cuda_memset_record r{};
  r.address = destination;
  r.value = value;
  r.bytes = count;
  r.stream = stream;
  r.call_index = call.s.call_log.size() - 1;
  call.s.memsets.push_back(r);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned flags) {
  Entry call("cuStreamCreate");
  if (call.early) return call.early;
  if (stream == nullptr || flags > 1)
    return fake_cuda::kInvalidValue;  // CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING
  call.s.streams.push_back(std::make_unique<fake_cuda::Stream>());
  *stream = reinterpret_cast<CUstream>(call.s.streams.back().get());
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  Entry call("cuStreamDestroy_v2");
  if (call.early) return call.early;
  fake_cuda::Stream* owned = call.s.find_stream(stream);
  if (owned == nullptr || owned->destroyed) return fake_cuda::kInvalidHandle;
  owned->destroyed = true;  // the object stays: a stale handle never aliases a new stream
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  Entry call("cuStreamSynchronize");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  if (!call.s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuEventCreate(CUevent* event, unsigned flags) {
  Entry call("cuEventCreate");
  if (call.early) return call.early;
  if (event == nullptr || flags > 0xF) return fake_cuda::kInvalidValue;
  call.s.events.push_back(std::make_unique<fake_cuda::Event>());
  *event = reinterpret_cast<CUevent>(call.s.events.back().get());
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuEventDestroy_v2(CUevent handle) {
  Entry call("cuEventDestroy_v2");
  if (call.early) return call.early;
  fake_cuda::Event* event = call.s.find_event(handle);
  if (event == nullptr || event->destroyed) return fake_cuda::kInvalidHandle;
  event->destroyed = true;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuEventRecord(CUevent handle, CUstream stream) {
  Entry call("cuEventRecord");
  if (call.early) return call.early;
  fake_cuda::Event* event = call.s.find_event(handle);
  if (event == nullptr || event->destroyed || !call.s.has_stream(stream)) return fake_cuda::kInvalidHandle;
  event->recorded = true;
  event->stamp = ++call.s.event_clock;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuEventSynchronize(CUevent handle) {
  Entry call("cuEventSynchronize");
  if (call.early) return call.early;
  fake_cuda::Event* event = call.s.find_event(handle);
  if (event == nullptr || event->destroyed) return fake_cuda::kInvalidHandle;
  return fake_cuda::kSuccess;
}

// Elapsed "milliseconds": the number of launches and event records between the two events.
FAKE_CUDA_EXPORT CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start, CUevent end) {
  Entry call("cuEventElapsedTime_v2");
  if (call.early) return call.early;
  if (milliseconds == nullptr) return fake_cuda::kInvalidValue;
  const fake_cuda::Event* first = call.s.find_event(start);
  const fake_cuda::Event* last = call.s.find_event(end);
  if (first == nullptr || last == nullptr || first->destroyed || last->destroyed)
    return fake_cuda::kInvalidHandle;
  if (!first->recorded || !last->recorded) return fake_cuda::kInvalidHandle;
  *milliseconds = static_cast<float>(static_cast<double>(last->stamp) - static_cast<double>(first->stamp));
  return fake_cuda::kSuccess;
}
