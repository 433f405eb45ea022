// Fiber stacks: one mapping per block executor, each stack above a guard page so an
// overflow faults instead of corrupting its neighbour.
#pragma once

#include <cstddef>
#include <vector>

namespace fstitch::host {

class FiberStacks {
 public:
  FiberStacks() = default;
  ~FiberStacks();
  FiberStacks(const FiberStacks&) = delete;
  FiberStacks& operator=(const FiberStacks&) = delete;

  // Makes at least `count` stacks of `stack_bytes` (rounded up to pages) available, keeping
  // the current mapping when it is large enough. Throws Error(kOutOfMemory) on failure.
  void reserve(std::size_t count, std::size_t stack_bytes);

  char* stack_low(std::size_t index) const { return base_ + index * slot_bytes_ + guard_bytes_; }
  std::size_t stack_bytes() const { return stack_bytes_; }
  std::size_t count() const { return count_; }

 private:
  void release();

  char* base_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::size_t slot_bytes_ = 0;  // guard + stack
  std::size_t guard_bytes_ = 0;
  std::size_t stack_bytes_ = 0;
  std::size_t count_ = 0;
  std::vector<unsigned> valgrind_ids_;  // stacks announced to Valgrind, when run under it
};

}  // namespace fstitch::host
