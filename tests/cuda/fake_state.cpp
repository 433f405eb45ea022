#include "cuda/fake_state.hpp"

#include <algorithm>
#include <cstring>

namespace fake_cuda {
namespace {

template <class T>
T* find_owned(const std::vector<std::unique_ptr<T>>& owned, const void* handle) {
  if (handle == nullptr) return nullptr;
  for (const auto& object : owned) {
    if (object.get() == handle) return object.get();
  }
  return nullptr;
}

}  // namespace

CUresult State::enter(const char* entry_point) {
  call_log.push_back(entry_point);
  auto found = injections.find(entry_point);
  if (found == injections.end()) return kSuccess;
  if (found->second.skip > 0) {
    --found->second.skip;
    return kSuccess;
  }
  const CUresult result = found->second.result;
  if (found->second.remaining > 0 && --found->second.remaining == 0) injections.erase(found);
  return result;
}

Context* State::find_context(const void* handle) const {
  return find_owned(contexts, handle);
}

Kernel* State::find_kernel(const void* handle) const {
  return find_owned(kernel_objects, handle);
}

Function* State::find_function(const void* handle) const {
  return find_owned(function_objects, handle);
}

Library* State::find_library(const void* handle) const {
  return find_owned(library_objects, handle);
}

Stream* State::find_stream(const void* handle) const {
  return find_owned(streams, handle);
}

bool State::has_stream(const void* handle) const {
  const auto value = reinterpret_cast<uintptr_t>(handle);
  if (value == 0 || value == 1 || value == 2) return true;
  const Stream* stream = find_stream(handle);
  return stream != nullptr && !stream->destroyed;
}

Event* State::find_event(const void* handle) const {
  return find_owned(events, handle);
}

Context* State::primary(int device) {
  auto found = primaries.find(device);
  if (found != primaries.end()) return found->second;
  contexts.push_back(std::make_unique<Context>());
  contexts.back()->device = device;
  contexts.back()->primary = true;
  primaries[device] = contexts.back().get();
  return contexts.back().get();
}

bool State::usable(const Context* context) const {
  if (context == nullptr) return false;
  if (!context->primary) return true;
  auto retains = primary_retains.find(context->device);
  return retains != primary_retains.end() && retains->second > 0;
}

const Allocation* State::allocation_holding(uintptr_t address, size_t bytes) const {
  auto above = live.upper_bound(address);
  if (above == live.begin()) return nullptr;
  const auto& [base, allocation] = *std::prev(above);
  if (address - base > allocation.bytes || bytes > allocation.bytes - (address - base)) return nullptr;
  return &allocation;
}

void State::clear_records() {
  call_log.clear();
  launches.clear();
  allocations.clear();
  memsets.clear();
  libraries.clear();
  // Live allocations and libraries keep working; only their records are gone.
  for (auto& [address, allocation] : live) allocation.record = SIZE_MAX;
  for (auto& library : library_objects) library->record = SIZE_MAX;
}

void State::reset() {
  config = Config();
  injections.clear();
  clear_records();
  context_stack().clear();
}

Entry::Entry(const char* entry_point, bool needs_init) : s(state()), lock(s.mutex) {
  early = s.enter(entry_point);
  if (early == kSuccess && needs_init && !s.initialized) early = kNotInitialized;
}

Context* usable_current_context(const State& s) {
  Context* context = current_context();
  return s.usable(context) ? context : nullptr;
}

State& state() {
  // Never destroyed: fstitch may call into the driver from static destructors.
  static State* instance = new State();
  return *instance;
}

std::vector<Context*>& context_stack() {
  thread_local std::vector<Context*> stack;
  return stack;
}

void copy_name(char (&field)[FAKE_CUDA_NAME_CAPACITY], const std::string& text) {
  const size_t n = std::min(text.size(), sizeof field - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

}  // namespace fake_cuda
