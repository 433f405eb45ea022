// Runs the threads of one CUDA block as fibers on the calling OS thread: barriers, warp
// exchanges, shared memory, and the diagnosis of blocks that can never finish.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/host/context.hpp"
#include "runtime/host/fiber_stacks.hpp"
#include "runtime/host/host_abi.hpp"
#include "runtime/host/host_options.hpp"

namespace fstitch::host {

// fst_host_entry_<kernel> of a loaded object.
using KernelEntry = void (*)(void** params);

// What all blocks of one launch share. Validated before any block starts.
struct KernelLaunch {
  std::string kernel_name;
  KernelEntry entry = nullptr;
  void** params = nullptr;
  fst_host_uint3 grid{1, 1, 1};
  fst_host_uint3 block{1, 1, 1};
  std::uint32_t threads_per_block = 1;
  std::size_t dynamic_shared_bytes = 0;
  ThreadOrder order = ThreadOrder::kForward;
  std::size_t stack_bytes = 64 * 1024;
};

class BlockExecutor;

// A stack mapping that several blocks of a cooperative launch take turns on, so that a grid
// larger than the mappings a process may have (two per guarded stack) keeps every stack
// guarded: the block running there has its fibers' stacks in place, each other block keeps
// what its suspended fibers have in use on their stacks in a copy, put back (at the same
// addresses) when it runs again.
struct SharedStacks {
  FiberStacks stacks;
  BlockExecutor* occupant = nullptr;  // whose fibers' stacks are in place
};

enum class FiberState : std::uint8_t {
  kReady,
  kRunning,
  kBarrier,
  kClusterBarrier,
  kWarp,
  kSleeping,
  kExited,
  kFailed
};

struct Fiber {
  fst_host_thread thread{};  // what generated code reads: threadIdx, blockIdx, ...
  Context context;
  BlockExecutor* block = nullptr;
  std::uint32_t linear = 0;  // x + y * dim.x + z * dim.x * dim.y
  FiberState state = FiberState::kReady;
  std::uint32_t shared_declarations = 0;  // FST_SHARED arrays taken so far
  fst_host_site site{0, 0};               // the __syncthreads or warp operation it waits at
  // The warp operation this thread waits at, what it offers and what it receives.
  int warp_op = 0;
  std::uint32_t warp_mask = 0;
  std::uint32_t warp_source = 0;
  std::uint64_t warp_value = 0;
  std::uint64_t warp_result = 0;
};

enum class BlockStatus {
  kFinished,  // every thread returned
  kSleeping,  // the only runnable threads called __nanosleep: run again later
  kCluster,   // every thread waits at a cluster barrier: release_cluster() once all blocks do
  kFailed,    // error() says why
};

// One resident block. Reused across blocks: stacks and shared arena stay mapped.
class BlockExecutor {
 public:
  BlockExecutor() = default;
  ~BlockExecutor();
  BlockExecutor(const BlockExecutor&) = delete;
  BlockExecutor& operator=(const BlockExecutor&) = delete;

  // Prepares every thread of block `block_idx` to run from the start. `launch` must outlive
  // the block. Throws Error(kOutOfMemory) when stacks or shared memory cannot be had.
  void start(const KernelLaunch& launch, fst_host_uint3 block_idx);

  // Runs the blocks this executor starts next on `shared` (which must outlive them), or on
  // stacks of its own (nullptr, the default).
  void share_stacks(SharedStacks* shared);

  // Runs the block's threads until none can run; `scheduler` receives control back.
  BlockStatus run(Context& scheduler);
  const std::string& error() const { return error_; }

  // Services for the running fiber `self` (through the host API).
  void syncthreads(Fiber& self, fst_host_site site);
  void sleep(Fiber& self);
  std::uint64_t warp_exchange(Fiber& self, fst_host_site site, int op, std::uint32_t mask,
                              std::uint64_t value, std::uint32_t source_lane);
  void* shared_alloc(Fiber& self, std::uint64_t bytes, std::uint64_t alignment);
  void cluster_sync(Fiber& self, fst_host_site site);
  void* cluster_map_shared(Fiber& self, void* shared, std::uint32_t rank);

  // The blocks of this block's cluster, by rank (this one among them), for a launch in
  // clusters; empty otherwise. They must outlive the block's run.
  void set_cluster(const std::vector<BlockExecutor*>* peers) { cluster_ = peers; }
  // Lets the threads waiting at the cluster barrier go on (every block of the cluster waits).
  void release_cluster();
  // "block (x, y, z)", for diagnostics of a cluster.
  std::string name() const { return block_name(); }
  [[noreturn]] void trap(Fiber& self, const char* what);

 private:
  struct SharedArray {
    std::uint64_t offset, bytes, alignment;
    std::uint32_t declared_by;
  };
  // Indices of runnable fibers, oldest first; each fiber is in it at most once.
  class ReadyQueue {
   public:
    void reset(std::uint32_t capacity);
    bool empty() const { return size_ == 0; }
    void push(std::uint32_t index);
    std::uint32_t pop();

   private:
    std::vector<std::uint32_t> slots_;
    std::uint32_t head_ = 0, size_ = 0;
  };

  [[noreturn]] static void run_fiber(void* fiber);
  // `self` reaches a barrier at `site`: counted in `arrived` and checked against `first`, the
  // thread whose call the others must match; a different call ends the block with
  // "<barrier> divergence: ...; <rule>".
  void arrive(Fiber& self, fst_host_site site, FiberState state, std::uint32_t& arrived, std::uint32_t& first,
              const char* barrier, const char* rule);
  [[noreturn]] void exit(Fiber& self);
  // Gives the OS thread to the next runnable fiber, or back to the scheduler.
  void suspend(Fiber& self);
  // Ends the block with error_ (already set) from inside fiber `self`.
  [[noreturn]] void abandon(Fiber& self);
  void make_ready(std::uint32_t index);
  void ensure_arena(std::size_t dynamic_bytes);
  FiberStacks& stacks() { return shared_ != nullptr ? shared_->stacks : stacks_; }
  // Puts this block's fibers' stacks in place on shared stacks, setting aside the occupant's.
  void occupy_shared_stacks();
  // Copies what the suspended fibers use of their stacks aside (shared stacks).
  void save_stacks();
  void restore_stacks();

  std::string block_name() const;
  std::string thread_name(const Fiber& fiber) const;
  // "__shfl_xor_sync on line 12" for the call `fiber` waits at.
  static std::string call_name(const Fiber& fiber);
  // "thread (1, 0, 0) ... waits at <call> while thread ... waits at <call>".
  std::string describe_calls(const Fiber& a, const Fiber& b) const;
  std::string describe_deadlock() const;
  std::string describe_lane(const Fiber& waiter, std::uint32_t lane) const;

  const KernelLaunch* launch_ = nullptr;
  fst_host_uint3 block_idx_{0, 0, 0};
  Context* scheduler_ = nullptr;

  std::unique_ptr<Fiber[]> fibers_;
  std::uint32_t fiber_capacity_ = 0;
  std::uint32_t count_ = 0;
  FiberStacks stacks_;
  SharedStacks* shared_ = nullptr;
  // Per fiber, on shared stacks while another block occupies them: the bytes from the lowest
  // one its context uses to the top of its stack (empty: exited, or nothing saved).
  std::vector<std::vector<unsigned char>> stack_images_;
  ReadyQueue ready_;
  std::vector<std::uint32_t> sleepers_;
  std::vector<std::uint32_t> warp_waiting_;  // per warp: lanes waiting at a warp operation
  std::uint32_t at_barrier_ = 0;
  std::uint32_t at_cluster_barrier_ = 0;
  std::uint32_t first_at_cluster_barrier_ = 0;
  const std::vector<BlockExecutor*>* cluster_ = nullptr;
  std::uint32_t first_at_barrier_ = 0;  // the thread whose __syncthreads the others must match
  std::uint32_t exited_ = 0;
  bool failed_ = false;
  std::string error_;

  // Shared memory: [0, kMaxStaticSharedBytes) static arrays, then the dynamic bytes.
  unsigned char* arena_ = nullptr;
  std::size_t arena_bytes_ = 0;
  std::size_t static_used_ = 0;  // static bytes handed out since the arena was last filled
  std::size_t static_limit_ = 0;
  std::vector<SharedArray> shared_arrays_;
};

// "__shfl_xor_sync" etc. for a FST_HOST_WARP_* value.
const char* warp_op_name(int op);

}  // namespace fstitch::host
