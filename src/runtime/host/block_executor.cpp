#include "runtime/host/block_executor.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/error.hpp"

namespace fstitch::host {
namespace {

// Shared memory starts as all-ones bytes (a NaN in every float type), so reads of shared
// memory that no thread wrote show up in results.
constexpr unsigned char kSharedFill = 0xFF;
constexpr std::size_t kArenaAlignment = 128;
constexpr std::uint64_t kUnreadableLane = ~std::uint64_t{0};

std::string hex_mask(std::uint32_t mask) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", mask);
  return text;
}

std::string triple(fst_host_uint3 v) {
  return "(" + std::to_string(v.x) + ", " + std::to_string(v.y) + ", " + std::to_string(v.z) + ")";
}

// The lanes of warp `warp` that exist in a block of `count` threads.
std::uint32_t existing_lanes(std::uint32_t count, std::uint32_t warp) {
  const std::uint32_t lanes = count - warp * 32;
  return lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u;
}

}  // namespace

const char* warp_op_name(int op) {
  switch (op) {
    case FST_HOST_WARP_SYNC:
      return "__syncwarp";
    case FST_HOST_WARP_SHFL_IDX:
      return "__shfl_sync";
    case FST_HOST_WARP_SHFL_UP:
      return "__shfl_up_sync";
    case FST_HOST_WARP_SHFL_DOWN:
      return "__shfl_down_sync";
    case FST_HOST_WARP_SHFL_XOR:
      return "__shfl_xor_sync";
    default:
      return "an unknown warp operation";
  }
}

void BlockExecutor::ReadyQueue::reset(std::uint32_t capacity) {
  slots_.resize(capacity);
  head_ = size_ = 0;
}

void BlockExecutor::ReadyQueue::push(std::uint32_t index) {
  const auto capacity = static_cast<std::uint32_t>(slots_.size());
  slots_[(head_ + size_) % capacity] = index;
  ++size_;
}

std::uint32_t BlockExecutor::ReadyQueue::pop() {
  const std::uint32_t index = slots_[head_];
  head_ = (head_ + 1) % static_cast<std::uint32_t>(slots_.size());
  --size_;
  return index;
}

BlockExecutor::~BlockExecutor() {
  if (shared_ != nullptr && shared_->occupant == this) shared_->occupant = nullptr;
  std::free(arena_);
}

void BlockExecutor::share_stacks(SharedStacks* shared) {
  if (shared_ != nullptr && shared_->occupant == this) shared_->occupant = nullptr;
  shared_ = shared;
  stack_images_.clear();
}

void BlockExecutor::occupy_shared_stacks() {
  if (shared_ == nullptr || shared_->occupant == this) return;
  if (shared_->occupant != nullptr) shared_->occupant->save_stacks();
  shared_->occupant = this;
  restore_stacks();
}

void BlockExecutor::save_stacks() {
  FiberStacks& s = stacks();
  stack_images_.resize(count_);
  for (std::uint32_t i = 0; i < count_; ++i) {
    std::vector<unsigned char>& image = stack_images_[i];
    image.clear();
    const Fiber& f = fibers_[i];
    if (f.state == FiberState::kExited || f.state == FiberState::kFailed) continue;
    char* const low = s.stack_low(i);
    char* const top = low + s.stack_bytes();
    const char* from = static_cast<const char*>(f.context.stack_in_use_from());
    if (from == nullptr || from < low || from > top) from = low;
    // The frames' redzones are poisoned under AddressSanitizer: the copy reads them.
    forget_stack_frames(const_cast<char*>(from), static_cast<std::size_t>(top - from));
    image.assign(reinterpret_cast<const unsigned char*>(from), reinterpret_cast<const unsigned char*>(top));
  }
}

void BlockExecutor::restore_stacks() {
  FiberStacks& s = stacks();
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(stack_images_.size()); ++i) {
    std::vector<unsigned char>& image = stack_images_[i];
    if (image.empty()) continue;
    char* const top = s.stack_low(i) + s.stack_bytes();
    // What the previous occupant's frames left poisoned is not this fiber's.
    forget_stack_frames(s.stack_low(i), s.stack_bytes());
    std::memcpy(top - image.size(), image.data(), image.size());
    image.clear();
  }
}

void BlockExecutor::ensure_arena(std::size_t dynamic_bytes) {
  const std::size_t needed = kMaxStaticSharedBytes + dynamic_bytes;
  if (arena_ != nullptr && needed <= arena_bytes_) return;
  const std::size_t bytes = (needed + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  void* memory = std::aligned_alloc(kArenaAlignment, bytes);
  if (memory == nullptr) {
    fail(StatusCode::kOutOfMemory,
         "host backend: cannot allocate " + std::to_string(bytes) + " bytes of shared memory for a block");
  }
  std::free(arena_);
  arena_ = static_cast<unsigned char*>(memory);
  arena_bytes_ = bytes;
  std::memset(arena_, kSharedFill, arena_bytes_);
  static_used_ = 0;
}

void BlockExecutor::start(const KernelLaunch& launch, fst_host_uint3 block_idx) {
  launch_ = &launch;
  block_idx_ = block_idx;
  const std::uint32_t n = launch.threads_per_block;
  if (n > fiber_capacity_) {
    fibers_ = std::make_unique<Fiber[]>(n);
    fiber_capacity_ = n;
  }
  if (shared_ != nullptr) {
    // The previous occupant's fibers keep their stacks aside; this block's start on them.
    if (shared_->occupant != nullptr && shared_->occupant != this) shared_->occupant->save_stacks();
    shared_->occupant = this;
    stack_images_.clear();
  }
  stacks().reserve(n, launch.stack_bytes);
  ensure_arena(launch.dynamic_shared_bytes);

  // Only what the previous block was handed can have been written.
  std::memset(arena_, kSharedFill, static_used_);
  std::memset(arena_ + kMaxStaticSharedBytes, kSharedFill, launch.dynamic_shared_bytes);
  static_used_ = 0;
  static_limit_ = std::min(kMaxStaticSharedBytes, kMaxSharedBytesPerBlock - launch.dynamic_shared_bytes);
  shared_arrays_.clear();

  count_ = n;
  at_barrier_ = 0;
  at_cluster_barrier_ = 0;
  exited_ = 0;
  failed_ = false;
  error_.clear();
  sleepers_.clear();
  ready_.reset(n);
  warp_waiting_.assign((n + 31) / 32, 0);

  const fst_host_uint3 dim = launch.block;
  for (std::uint32_t i = 0; i < n; ++i) {
    Fiber& f = fibers_[i];
    f.thread.thread_idx = {i % dim.x, (i / dim.x) % dim.y, i / (dim.x * dim.y)};
    f.thread.block_idx = block_idx;
    f.thread.block_dim = dim;
    f.thread.grid_dim = launch.grid;
    f.thread.dynamic_shared = arena_ + kMaxStaticSharedBytes;
    f.thread.runtime = &f;
    f.block = this;
    f.linear = i;
    f.state = FiberState::kReady;
    f.shared_declarations = 0;
    f.context.prepare(stacks().stack_low(i), stacks().stack_bytes(), &BlockExecutor::run_fiber, &f);
  }
  for (std::uint32_t i = 0; i < n; ++i) ready_.push(launch.order == ThreadOrder::kForward ? i : n - 1 - i);
}

void BlockExecutor::run_fiber(void* fiber) {
  Fiber& self = *static_cast<Fiber*>(fiber);
  BlockExecutor& block = *self.block;
  set_current_thread(&self.thread);
  block.launch_->entry(block.launch_->params);
  block.exit(self);
}

BlockStatus BlockExecutor::run(Context& scheduler) {
  if (failed_) return BlockStatus::kFailed;
  occupy_shared_stacks();
  scheduler_ = &scheduler;
  for (std::uint32_t index : sleepers_) make_ready(index);
  sleepers_.clear();
  if (!ready_.empty()) {
    Fiber& next = fibers_[ready_.pop()];
    next.state = FiberState::kRunning;
    Context::switch_to(scheduler, next.context);
  }
  if (failed_) return BlockStatus::kFailed;
  if (exited_ == count_) return BlockStatus::kFinished;
  if (!sleepers_.empty()) return BlockStatus::kSleeping;
  if (at_cluster_barrier_ == count_) return BlockStatus::kCluster;
  error_ = describe_deadlock();
  failed_ = true;
  return BlockStatus::kFailed;
}

void BlockExecutor::make_ready(std::uint32_t index) {
  fibers_[index].state = FiberState::kReady;
  ready_.push(index);
}

void BlockExecutor::suspend(Fiber& self) {
  if (ready_.empty()) {
    Context::switch_to(self.context, *scheduler_, self.state == FiberState::kExited);
    return;
  }
  Fiber& next = fibers_[ready_.pop()];
  next.state = FiberState::kRunning;
  if (&next == &self) return;
  Context::switch_to(self.context, next.context, self.state == FiberState::kExited);
}

void BlockExecutor::exit(Fiber& self) {
  self.state = FiberState::kExited;
  ++exited_;
  suspend(self);
  std::abort();  // an exited fiber is never resumed
}

void BlockExecutor::abandon(Fiber& self) {
  failed_ = true;
  self.state = FiberState::kFailed;
  Context::switch_to(self.context, *scheduler_, true);
  std::abort();  // the block is dropped; its fibers are never resumed
}

void BlockExecutor::arrive(Fiber& self, fst_host_site site, FiberState state, std::uint32_t& arrived,
                           std::uint32_t& first, const char* barrier, const char* rule) {
  self.state = state;
  self.site = site;
  if (arrived == 0) {
    first = self.linear;
  } else if (fibers_[first].site.call != site.call) {
    error_ =
        block_name() + ": " + barrier + " divergence: " + describe_calls(self, fibers_[first]) + "; " + rule;
    abandon(self);
  }
  ++arrived;
}

void BlockExecutor::syncthreads(Fiber& self, fst_host_site site) {
  arrive(self, site, FiberState::kBarrier, at_barrier_, first_at_barrier_, "barrier",
         "every thread of a block must reach the same __syncthreads");
  if (at_barrier_ == count_) {
    // Everyone arrived, so no other fiber is runnable: release all in the chosen order.
    at_barrier_ = 0;
    for (std::uint32_t i = 0; i < count_; ++i)
      make_ready(launch_->order == ThreadOrder::kForward ? i : count_ - 1 - i);
  }
  suspend(self);
}

void BlockExecutor::cluster_sync(Fiber& self, fst_host_site site) {
  arrive(self, site, FiberState::kClusterBarrier, at_cluster_barrier_, first_at_cluster_barrier_,
         "cluster barrier", "every thread of a cluster must reach the same cluster barrier");
  // A block alone (no cluster) passes once all its threads are there.
  if (at_cluster_barrier_ == count_ && (cluster_ == nullptr || cluster_->size() <= 1)) release_cluster();
  suspend(self);
}

void BlockExecutor::release_cluster() {
  at_cluster_barrier_ = 0;
  for (std::uint32_t i = 0; i < count_; ++i)
    make_ready(launch_->order == ThreadOrder::kForward ? i : count_ - 1 - i);
}

void* BlockExecutor::cluster_map_shared(Fiber& self, void* shared, std::uint32_t rank) {
  const std::size_t size = cluster_ == nullptr ? 1 : cluster_->size();
  if (rank >= size) {
    error_ = block_name() + ": " + thread_name(self) + " maps shared memory of cluster rank " +
             std::to_string(rank) + ", but its cluster has " + std::to_string(size) + " block(s)";
    abandon(self);
  }
  auto* p = static_cast<unsigned char*>(shared);
  if (arena_ == nullptr || p < arena_ || p >= arena_ + arena_bytes_) {
    error_ = block_name() + ": " + thread_name(self) +
             " maps an address that is not in its block's shared memory to another block of its cluster";
    abandon(self);
  }
  if (cluster_ == nullptr) return shared;
  return (*cluster_)[rank]->arena_ + (p - arena_);
}

void BlockExecutor::sleep(Fiber& self) {
  self.state = FiberState::kSleeping;
  sleepers_.push_back(self.linear);
  suspend(self);
}

std::uint64_t BlockExecutor::warp_exchange(Fiber& self, fst_host_site site, int op, std::uint32_t mask,
                                           std::uint64_t value, std::uint32_t source_lane) {
  const std::uint32_t warp = self.linear / 32;
  const std::uint32_t lane = self.linear % 32;
  const std::uint32_t existing = existing_lanes(count_, warp);
  if ((mask & (1u << lane)) == 0) {
    error_ = block_name() + ": " + thread_name(self) + " calls " + warp_op_name(op) + " with mask " +
             hex_mask(mask) + ", which does not include its own lane " + std::to_string(lane);
    abandon(self);
  }
  if ((mask & ~existing) != 0) {
    error_ = block_name() + ": " + thread_name(self) + " calls " + warp_op_name(op) + " with mask " +
             hex_mask(mask) + ", which names lanes that do not exist: the block has " +
             std::to_string(count_) + " threads, so warp " + std::to_string(warp) + " has lanes " +
             hex_mask(existing) + " (full-mask warp operations need a block size that is a multiple of 32)";
    abandon(self);
  }
  self.state = FiberState::kWarp;
  self.site = site;
  self.warp_op = op;
  self.warp_mask = mask;
  self.warp_value = value;
  self.warp_source = source_lane;
  std::uint32_t& waiting = warp_waiting_[warp];
  waiting |= 1u << lane;

  if ((waiting & mask) == mask) {
    Fiber* lanes = &fibers_[warp * 32];
    bool same = true;
    for (std::uint32_t j = 0; j < 32 && same; ++j) {
      if ((mask >> j & 1u) != 0 && lanes[j].warp_mask != mask) same = false;
    }
    if (same) {
      for (std::uint32_t j = 0; j < 32; ++j) {
        if ((mask >> j & 1u) == 0) continue;
        if (lanes[j].site.call != site.call) {
          error_ = block_name() + ": divergent warp operation: the lanes of mask " + hex_mask(mask) +
                   " meet at different calls: " + describe_calls(self, lanes[j]) +
                   "; every lane named in a mask must reach the same call";
          abandon(self);
        }
      }
      // Every lane of the mask offered its value at this operation: deliver them all at once.
      for (std::uint32_t j = 0; j < 32; ++j) {
        if ((mask >> j & 1u) == 0) continue;
        const std::uint32_t source = lanes[j].warp_source;
        lanes[j].warp_result =
            source < 32 && (mask >> source & 1u) != 0 ? lanes[source].warp_value : kUnreadableLane;
      }
      waiting &= ~mask;
      for (std::uint32_t k = 0; k < 32; ++k) {
        const std::uint32_t j = launch_->order == ThreadOrder::kForward ? k : 31 - k;
        if ((mask >> j & 1u) != 0) make_ready(warp * 32 + j);
      }
    }
  }
  suspend(self);
  return self.warp_result;
}

void* BlockExecutor::shared_alloc(Fiber& self, std::uint64_t bytes, std::uint64_t alignment) {
  const std::uint32_t k = self.shared_declarations++;
  if (k < shared_arrays_.size()) {
    const SharedArray& array = shared_arrays_[k];
    if (array.bytes != bytes || array.alignment != alignment) {
      error_ = block_name() + ": FST_SHARED declarations differ between threads: " + thread_name(self) +
               " declares shared array #" + std::to_string(k) + " with " + std::to_string(bytes) +
               " bytes, " + thread_name(fibers_[array.declared_by]) + " with " + std::to_string(array.bytes) +
               " bytes (declare shared arrays unconditionally, in the same order in every thread)";
      abandon(self);
    }
    return arena_ + array.offset;
  }
  const std::uint64_t align = std::max<std::uint64_t>(alignment, 16);
  const std::uint64_t end =
      shared_arrays_.empty() ? 0 : shared_arrays_.back().offset + shared_arrays_.back().bytes;
  const std::uint64_t offset = (end + align - 1) / align * align;
  if (bytes > static_limit_ || offset > static_limit_ - bytes || (align & (align - 1)) != 0 ||
      align > kArenaAlignment) {
    error_ = block_name() + ": static shared memory does not fit: shared array #" + std::to_string(k) +
             " of " + std::to_string(bytes) + " bytes (alignment " + std::to_string(alignment) +
             ") at offset " + std::to_string(offset) + " exceeds the " + std::to_string(static_limit_) +
             " bytes a block may declare statically with " + std::to_string(launch_->dynamic_shared_bytes) +
             " bytes of dynamic shared memory";
    abandon(self);
  }
  shared_arrays_.push_back({offset, bytes, alignment, self.linear});
  static_used_ = std::max<std::size_t>(static_used_, offset + bytes);
  return arena_ + offset;
}

void BlockExecutor::trap(Fiber& self, const char* what) {
  error_ = block_name() + ": " + thread_name(self) + " called " + (what != nullptr ? what : "__trap()");
  abandon(self);
}

std::string BlockExecutor::block_name() const {
  return "kernel '" + launch_->kernel_name + "' block " + triple(block_idx_);
}

std::string BlockExecutor::thread_name(const Fiber& fiber) const {
  return "thread " + triple(fiber.thread.thread_idx) + " (warp " + std::to_string(fiber.linear / 32) +
         ", lane " + std::to_string(fiber.linear % 32) + ")";
}

std::string BlockExecutor::call_name(const Fiber& fiber) {
  const char* what = fiber.state == FiberState::kBarrier ? "__syncthreads" : warp_op_name(fiber.warp_op);
  return std::string(what) + " on line " + std::to_string(fiber.site.line);
}

std::string BlockExecutor::describe_calls(const Fiber& a, const Fiber& b) const {
  const std::string second =
      a.site.line == b.site.line
          ? "another " + call_name(b).substr(0, call_name(b).find(' ')) + " call on that line"
          : call_name(b);
  return thread_name(a) + " waits at " + call_name(a) + " while " + thread_name(b) + " waits at " + second;
}

std::string BlockExecutor::describe_lane(const Fiber& waiter, std::uint32_t lane) const {
  const Fiber& other = fibers_[waiter.linear / 32 * 32 + lane];
  const std::string name = "lane " + std::to_string(lane);
  switch (other.state) {
    case FiberState::kExited:
      return name + " has exited";
    case FiberState::kBarrier:
      return name + " waits at " + call_name(other);
    case FiberState::kWarp:
      return name + " waits at " + call_name(other) + " with mask " + hex_mask(other.warp_mask);
    default:
      return name + " cannot arrive";
  }
}

std::string BlockExecutor::describe_deadlock() const {
  std::uint32_t at_warp = 0;
  const Fiber* first_warp_waiter = nullptr;
  for (std::uint32_t i = 0; i < count_; ++i) {
    if (fibers_[i].state != FiberState::kWarp) continue;
    ++at_warp;
    if (first_warp_waiter == nullptr) first_warp_waiter = &fibers_[i];
  }
  const std::string where = block_name() + " can never finish: ";
  if (at_barrier_ > 0 && exited_ > 0 && at_barrier_ + exited_ == count_) {
    return where + "barrier divergence: " + std::to_string(exited_) + " of " + std::to_string(count_) +
           " threads exited while " + std::to_string(at_barrier_) +
           " wait at __syncthreads; every thread of a block must reach each __syncthreads (the host "
           "backend does not let exited threads count toward a barrier)";
  }
  if (first_warp_waiter != nullptr) {
    const Fiber& w = *first_warp_waiter;
    std::string missing;
    for (std::uint32_t j = 0; j < 32; ++j) {
      if ((w.warp_mask >> j & 1u) == 0) continue;
      const Fiber& other = fibers_[w.linear / 32 * 32 + j];
      if (other.state == FiberState::kWarp && other.warp_mask == w.warp_mask) continue;
      missing = describe_lane(w, j);
      break;
    }
    return where + thread_name(w) + " waits at " + call_name(w) + " with mask " + hex_mask(w.warp_mask) +
           " but " + missing + " (" + std::to_string(at_warp) + " threads wait at warp operations, " +
           std::to_string(at_barrier_) + " at __syncthreads, " + std::to_string(exited_) + " exited)";
  }
  return where + "deadlock: " + std::to_string(at_barrier_) + " threads wait at __syncthreads, " +
         std::to_string(exited_) + " of " + std::to_string(count_) + " exited";
}

}  // namespace fstitch::host
