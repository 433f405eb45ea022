#include "runtime/host/launch.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/host/worker_pool.hpp"
#include "support/checked_math.hpp"
#include "support/error.hpp"

namespace fstitch::host {
namespace {

// Executors a worker keeps mapped after a cooperative launch needed more.
constexpr std::size_t kKeptExecutors = 2;

// Where the `count` executors of one worker's resident blocks of `threads` threads keep their
// fiber stacks: their own, when they fit in the worker's share of the guarded stacks
// (`guarded_threads`); otherwise executor i takes turns on shared stacks i mod S with the
// others there, S as many as the share holds.
void place_stacks(WorkerContext& worker, std::size_t count, std::uint32_t threads,
                  std::uint64_t guarded_threads) {
  const std::uint64_t slots =
      std::max<std::uint64_t>(1, guarded_threads / std::max<std::uint32_t>(1, threads));
  for (std::size_t i = 0; i < count; ++i)
    worker.executor(i).share_stacks(count <= slots ? nullptr : &worker.shared_stacks(i % slots));
}

// What the workers of one launch share: the next block to claim and the first failure.
class LaunchState {
 public:
  std::uint64_t claim() { return next_block_.fetch_add(1, std::memory_order_relaxed); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  void record(StatusCode code, const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    code_ = code;
    message_ = message;
    failed_.store(true, std::memory_order_release);
  }
  void rethrow() const {
    if (failed()) throw Error(code_, message_);
  }

 private:
  std::atomic<std::uint64_t> next_block_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::string dims_text(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

fst_host_uint3 block_index(const fst_host_uint3& grid, std::uint64_t linear) {
  const std::uint64_t x = linear % grid.x;
  const std::uint64_t y = linear / grid.x % grid.y;
  const std::uint64_t z = linear / (std::uint64_t{grid.x} * grid.y);
  return {static_cast<unsigned int>(x), static_cast<unsigned int>(y), static_cast<unsigned int>(z)};
}

std::uint64_t block_count(const fst_host_uint3& grid) {
  return std::uint64_t{grid.x} * grid.y * grid.z;
}

// The `n`th of `count` units (blocks or clusters) to start, in the launch's order.
std::uint64_t nth_unit(const KernelLaunch& launch, std::uint64_t n, std::uint64_t count) {
  return launch.order == ThreadOrder::kForward ? n : count - 1 - n;
}

// Non-cooperative: claim blocks one at a time and run each to the end.
void run_claimed_blocks(WorkerContext& worker, const KernelLaunch& launch, LaunchState& state) {
  const std::uint64_t blocks = block_count(launch.grid);
  BlockExecutor& executor = worker.executor(0);
  while (!state.failed()) {
    const std::uint64_t b = state.claim();
    if (b >= blocks) return;
    executor.start(launch, block_index(launch.grid, nth_unit(launch, b, blocks)));
    for (;;) {
      const BlockStatus status = executor.run(worker.scheduler());
      if (status == BlockStatus::kFinished) break;
      if (status == BlockStatus::kFailed) {
        state.record(StatusCode::kLaunch, executor.error());
        return;
      }
      if (state.failed()) return;
      // Only sleeping threads remain: they wait for something outside the block.
      std::this_thread::yield();
    }
  }
}

// Runs the blocks of one cluster in turns until all finish; when every unfinished block
// waits at the cluster barrier, releases them all. False when one failed (recorded).
bool run_cluster(WorkerContext& worker, const KernelLaunch& launch,
                 const std::vector<BlockExecutor*>& cluster, LaunchState& state) {
  std::vector<BlockStatus> status(cluster.size(), BlockStatus::kSleeping);
  for (;;) {
    bool all_finished = true, all_waiting = true, any_finished = false;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (status[i] != BlockStatus::kFinished && status[i] != BlockStatus::kCluster)
        status[i] = cluster[i]->run(worker.scheduler());
      if (status[i] == BlockStatus::kFailed) {
        state.record(StatusCode::kLaunch, cluster[i]->error());
        return false;
      }
      all_finished = all_finished && status[i] == BlockStatus::kFinished;
      any_finished = any_finished || status[i] == BlockStatus::kFinished;
      all_waiting =
          all_waiting && (status[i] == BlockStatus::kCluster || status[i] == BlockStatus::kFinished);
    }
    if (all_finished) return true;
    if (state.failed()) return false;
    if (all_waiting) {
      if (any_finished) {
        std::string finished;
        for (std::size_t i = 0; i < cluster.size(); ++i) {
          if (status[i] == BlockStatus::kFinished)
            finished += (finished.empty() ? "" : ", ") + cluster[i]->name();
        }
        state.record(StatusCode::kLaunch,
                     "launch of kernel '" + launch.kernel_name +
                         "': deadlock: blocks of a cluster wait at a cluster barrier that " + finished +
                         " exited without reaching");
        return false;
      }
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        cluster[i]->release_cluster();
        status[i] = BlockStatus::kSleeping;
      }
    }
  }
}

// Clusters: claim clusters one at a time and run each cluster's blocks together.
void run_claimed_clusters(WorkerContext& worker, const KernelLaunch& launch, LaunchState& state,
                          std::uint32_t cluster_blocks, std::uint64_t guarded_threads) {
  const std::uint64_t clusters = block_count(launch.grid) / cluster_blocks;
  std::vector<BlockExecutor*> cluster;
  place_stacks(worker, cluster_blocks, launch.threads_per_block, guarded_threads);
  while (!state.failed()) {
    const std::uint64_t claimed = state.claim();
    if (claimed >= clusters) break;
    const std::uint64_t c = nth_unit(launch, claimed, clusters);
    cluster.clear();
    for (std::uint32_t r = 0; r < cluster_blocks; ++r) cluster.push_back(&worker.executor(r));
    for (std::uint32_t r = 0; r < cluster_blocks; ++r) {
      cluster[r]->start(launch, block_index(launch.grid, c * cluster_blocks + r));
      cluster[r]->set_cluster(&cluster);
    }
    const bool ok = run_cluster(worker, launch, cluster, state);
    for (BlockExecutor* b : cluster) b->set_cluster(nullptr);
    if (!ok) break;
  }
}

// Cooperative: this task keeps blocks task, task + tasks, ... resident and runs them in
// turns, so a thread spinning with __nanosleep lets the other blocks progress.
void run_resident_blocks(WorkerContext& worker, const KernelLaunch& launch, LaunchState& state,
                         unsigned int task, unsigned int tasks, std::uint64_t guarded_threads) {
  const std::uint64_t blocks = block_count(launch.grid);
  std::vector<BlockExecutor*> resident;
  const std::uint64_t mine = task < blocks ? (blocks - task + tasks - 1) / tasks : 0;
  place_stacks(worker, static_cast<std::size_t>(mine), launch.threads_per_block, guarded_threads);
  for (std::uint64_t b = task; b < blocks; b += tasks) {
    BlockExecutor& executor = worker.executor(resident.size());
    executor.start(launch, block_index(launch.grid, nth_unit(launch, b, blocks)));
    resident.push_back(&executor);
  }
  while (!resident.empty() && !state.failed()) {
    for (std::size_t i = 0; i < resident.size();) {
      const BlockStatus status = resident[i]->run(worker.scheduler());
      if (status == BlockStatus::kFailed) {
        state.record(StatusCode::kLaunch, resident[i]->error());
        break;
      }
      if (status == BlockStatus::kFinished) {
        resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    // Blocks held by other workers may be what the sleeping threads wait for.
    if (!resident.empty() && tasks > 1) std::this_thread::yield();
  }
}

void run_task(const KernelLaunch& launch, const HostLaunchOptions& options, LaunchState& state,
              WorkerContext& worker, unsigned int task, unsigned int tasks) {
  // The workers share the process's budget of guarded stacks.
  const std::uint64_t guarded_threads = kMaxGuardedThreads / tasks;
  try {
    if (options.cooperative) {
      run_resident_blocks(worker, launch, state, task, tasks, guarded_threads);
    } else if (options.cluster_blocks > 1) {
      run_claimed_clusters(worker, launch, state, options.cluster_blocks, guarded_threads);
    } else {
      run_claimed_blocks(worker, launch, state);
    }
  } catch (const Error& error) {
    state.record(error.code(), error.what());
  } catch (const std::bad_alloc&) {
    state.record(StatusCode::kOutOfMemory,
                 "host backend: out of memory while running kernel '" + launch.kernel_name + "'");
  }
  // After a launch that needed many executors (or a failed one), a worker keeps few.
  worker.trim(kKeptExecutors);
}

}  // namespace

KernelLaunch make_kernel_launch(const std::string& kernel_name, KernelEntry entry, Dim3 grid, Dim3 block,
                                std::size_t dynamic_shared_bytes, void** params,
                                const HostLaunchOptions& options) {
  const std::string what = "launch of kernel '" + kernel_name + "': ";
  if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > kMaxBlockDimXY || block.y > kMaxBlockDimXY ||
      block.z > kMaxBlockDimZ || std::uint64_t{block.x} * block.y * block.z > kMaxThreadsPerBlock) {
    fail(StatusCode::kInvalidArgument,
         what + "block " + dims_text(block) +
             " is not a valid block size: each dimension must be at least 1, x and y at most " +
             std::to_string(kMaxBlockDimXY) + ", z at most " + std::to_string(kMaxBlockDimZ) +
             ", and at most " + std::to_string(kMaxThreadsPerBlock) + " threads in all");
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > kMaxGridDimX || grid.y > kMaxGridDimYZ ||
      grid.z > kMaxGridDimYZ) {
    fail(StatusCode::kInvalidArgument,
         what + "grid " + dims_text(grid) +
             " is not a valid grid size: each dimension must be at least 1, x at most " +
             std::to_string(kMaxGridDimX) + ", y and z at most " + std::to_string(kMaxGridDimYZ));
  }
  if (dynamic_shared_bytes > kMaxSharedBytesPerBlock) {
    fail(StatusCode::kInvalidArgument, what + std::to_string(dynamic_shared_bytes) +
                                           " bytes of dynamic shared memory exceed the limit of " +
                                           std::to_string(kMaxSharedBytesPerBlock) + " bytes per block");
  }
  if (options.stack_bytes < kMinStackBytes || options.stack_bytes > kMaxStackBytes) {
    fail(StatusCode::kInvalidArgument, what + "stack size " + std::to_string(options.stack_bytes) +
                                           " bytes is outside [" + std::to_string(kMinStackBytes) + ", " +
                                           std::to_string(kMaxStackBytes) + "]");
  }
  if (options.cluster_blocks == 0 || grid.x % options.cluster_blocks != 0 ||
      std::uint64_t{options.cluster_blocks} * block.x * block.y * block.z > kMaxResidentThreads) {
    fail(StatusCode::kInvalidArgument,
         what + "clusters of " + std::to_string(options.cluster_blocks) + " block(s) of " + dims_text(block) +
             " threads do not fit grid " + dims_text(grid) +
             ": the grid's x extent must be a multiple of the cluster size, and a cluster may hold at most " +
             std::to_string(kMaxResidentThreads) + " threads");
  }
  KernelLaunch launch;
  launch.kernel_name = kernel_name;
  launch.entry = entry;
  launch.params = params;
  launch.grid = {grid.x, grid.y, grid.z};
  launch.block = {block.x, block.y, block.z};
  launch.threads_per_block = block.x * block.y * block.z;
  launch.dynamic_shared_bytes = dynamic_shared_bytes;
  launch.order = options.order;
  launch.stack_bytes = options.stack_bytes;
  // Up to 2^63 blocks of 1024 threads: the product may not fit in 64 bits.
  const std::optional<std::uint64_t> threads =
      checked_mul(block_count(launch.grid), std::uint64_t{launch.threads_per_block});
  if (options.cooperative && (!threads || *threads > kMaxResidentThreads)) {
    fail(StatusCode::kLaunch, what + "a cooperative grid of " + dims_text(grid) + " blocks of " +
                                  dims_text(block) + " threads (" +
                                  (threads ? std::to_string(*threads) : std::string("more than 2^64")) +
                                  " threads) is too large to keep resident on the host; the limit is " +
                                  std::to_string(kMaxResidentThreads) + " threads");
  }
  return launch;
}

void execute_launch(const KernelLaunch& launch, const HostLaunchOptions& options) {
  WorkerPool& pool = WorkerPool::instance();
  std::uint64_t workers = pool.size();
  if (options.max_workers != 0) workers = std::min<std::uint64_t>(workers, options.max_workers);
  workers = std::min(workers, block_count(launch.grid) / std::max<std::uint32_t>(1, options.cluster_blocks));
  if (options.cluster_blocks > 1) {
    // Every thread of a resident cluster holds a fiber stack: the workers together hold at
    // most a cooperative grid's worth.
    const std::uint64_t cluster_threads = std::uint64_t{options.cluster_blocks} * launch.threads_per_block;
    workers = std::max<std::uint64_t>(1, std::min(workers, kMaxResidentThreads / cluster_threads));
  }
  const auto tasks = static_cast<unsigned int>(workers);
  LaunchState state;
  const WorkerPool::Task task = [&](WorkerContext& worker, unsigned int index) {
    run_task(launch, options, state, worker, index, tasks);
  };
  if (options.cooperative) {
    std::lock_guard<std::mutex> lock(pool.cooperative_mutex());
    pool.run(tasks, task);
  } else {
    pool.run(tasks, task);
  }
  state.rethrow();
}

}  // namespace fstitch::host
