// The runtime services that compiled kernel objects call (fst_host_api).
#include "runtime/host/host_abi.hpp"

#include "runtime/host/block_executor.hpp"

namespace fstitch::host {
namespace {

thread_local fst_host_thread* t_current_thread = nullptr;

Fiber& fiber_of(fst_host_thread* self) {
  return *static_cast<Fiber*>(self->runtime);
}

fst_host_thread* api_current() noexcept {
  return t_current_thread;
}

void api_syncthreads(fst_host_thread* self, fst_host_site site) noexcept {
  Fiber& fiber = fiber_of(self);
  fiber.block->syncthreads(fiber, site);
}

void api_nanosleep(fst_host_thread* self, unsigned int /*nanoseconds*/) noexcept {
  Fiber& fiber = fiber_of(self);
  fiber.block->sleep(fiber);
}

unsigned long long api_warp_exchange(fst_host_thread* self, fst_host_site site, int op, unsigned int mask,
                                     unsigned long long value, unsigned int source_lane) noexcept {
  Fiber& fiber = fiber_of(self);
  return fiber.block->warp_exchange(fiber, site, op, mask, value, source_lane);
}

void* api_shared_alloc(fst_host_thread* self, unsigned long long bytes,
                       unsigned long long alignment) noexcept {
  Fiber& fiber = fiber_of(self);
  return fiber.block->shared_alloc(fiber, bytes, alignment);
}

void api_trap(fst_host_thread* self, const char* what) noexcept {
  Fiber& fiber = fiber_of(self);
  fiber.block->trap(fiber, what);
}

void api_cluster_sync(fst_host_thread* self, fst_host_site site) noexcept {
  Fiber& fiber = fiber_of(self);
  fiber.block->cluster_sync(fiber, site);
}

void* api_cluster_map_shared(fst_host_thread* self, void* shared, unsigned int rank) noexcept {
  Fiber& fiber = fiber_of(self);
  return fiber.block->cluster_map_shared(fiber, shared, rank);
}

constexpr fst_host_api kApi = {
    FST_HOST_ABI_VERSION, &api_current, &api_syncthreads,  &api_nanosleep,          &api_warp_exchange,
    &api_shared_alloc,    &api_trap,    &api_cluster_sync, &api_cluster_map_shared,
};

}  // namespace

const fst_host_api& host_api() {
  return kApi;
}

void set_current_thread(fst_host_thread* thread) {
  t_current_thread = thread;
}

}  // namespace fstitch::host
