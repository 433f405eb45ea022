#include "runtime/host/fiber_stacks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "support/error.hpp"

// Valgrind follows stack switches only into stacks it was told about. The client requests are
// no-ops outside Valgrind.
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define FSTITCH_HOST_VALGRIND 1
#endif
#endif
#ifndef FSTITCH_HOST_VALGRIND
#define FSTITCH_HOST_VALGRIND 0
#endif

namespace fstitch::host {
namespace {

std::size_t page_bytes() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : 4096;
}

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

FiberStacks::~FiberStacks() {
  release();
}

void FiberStacks::release() {
#if FSTITCH_HOST_VALGRIND
  for (unsigned id : valgrind_ids_) VALGRIND_STACK_DEREGISTER(id);
#endif
  valgrind_ids_.clear();
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = slot_bytes_ = guard_bytes_ = stack_bytes_ = count_ = 0;
}

void FiberStacks::reserve(std::size_t count, std::size_t stack_bytes) {
  const std::size_t page = page_bytes();
  const std::size_t rounded = round_up(stack_bytes, page);
  if (base_ != nullptr && count <= count_ && rounded == stack_bytes_) return;
  release();
  const std::size_t slot = page + rounded;
  const std::size_t total = slot * count;
  void* mapping =
      mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    fail(StatusCode::kOutOfMemory, "host backend: cannot map " + std::to_string(count) + " fiber stacks of " +
                                       std::to_string(rounded) + " bytes: " + std::strerror(errno));
  }
  base_ = static_cast<char*>(mapping);
  mapped_bytes_ = total;
  slot_bytes_ = slot;
  guard_bytes_ = page;
  stack_bytes_ = rounded;
  count_ = count;
  for (std::size_t i = 0; i < count; ++i) {
    if (mprotect(base_ + i * slot, page, PROT_NONE) != 0) {
      const int error = errno;
      release();
      fail(StatusCode::kOutOfMemory,
           "host backend: cannot protect the guard pages of " + std::to_string(count) + " fiber stacks (" +
               std::strerror(error) +
               "); each thread of a resident block needs its own mapping: use smaller blocks, fewer "
               "workers (FSTITCH_HOST_THREADS) or raise vm.max_map_count");
    }
  }
#if FSTITCH_HOST_VALGRIND
  if (RUNNING_ON_VALGRIND) {
    for (std::size_t i = 0; i < count; ++i) {
      valgrind_ids_.push_back(VALGRIND_STACK_REGISTER(stack_low(i), stack_low(i) + rounded));
    }
  }
#endif
}

}  // namespace fstitch::host
