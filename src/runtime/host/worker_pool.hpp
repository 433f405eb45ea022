// The process-wide pool of worker threads that run the blocks of host launches.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/host/block_executor.hpp"
#include "runtime/host/context.hpp"

namespace fstitch::host {

// What a worker keeps between tasks: the context its block scheduler runs in, and block
// executors whose stacks and shared arenas stay mapped from launch to launch.
class WorkerContext {
 public:
  Context& scheduler() { return scheduler_; }
  BlockExecutor& executor(std::size_t slot);
  SharedStacks& shared_stacks(std::size_t slot);
  // Unmaps all but the first `keep` executors and no shared stacks (after a cooperative
  // launch needed many); every executor then has stacks of its own again.
  void trim(std::size_t keep);

 private:
  Context scheduler_;
  // Before the executors, so that they are destroyed first.
  std::vector<std::unique_ptr<SharedStacks>> shared_stacks_;
  std::vector<std::unique_ptr<BlockExecutor>> executors_;
};

class WorkerPool {
 public:
  using Task = std::function<void(WorkerContext& worker, unsigned int index)>;

  // The pool of this process, started on first use with FSTITCH_HOST_THREADS workers
  // (default: the hardware's thread count). Throws Error(kInvalidArgument) when the
  // variable is not a number from 1 to 1024.
  static WorkerPool& instance();

  explicit WorkerPool(unsigned int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned int size() const { return static_cast<unsigned int>(threads_.size()); }

  // Runs task(worker, i) for each i in [0, count) and returns when all have returned,
  // rethrowing the first exception a task threw. A worker runs one task at a time and
  // tasks start in submission order, so the tasks of one call with count <= size() all
  // run at the same time once the tasks submitted before them have finished.
  void run(unsigned int count, const Task& task);

  // Held for the whole of a cooperative launch: two cooperative launches waiting on their
  // own not-yet-started tasks could otherwise hold every worker between them.
  std::mutex& cooperative_mutex() { return cooperative_mutex_; }

 private:
  struct Job {
    const Task* task;
    unsigned int count;
    unsigned int next;
    unsigned int remaining;
    std::exception_ptr error;
    std::condition_variable done;
  };
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::mutex cooperative_mutex_;
};

// FSTITCH_HOST_THREADS, or the hardware's thread count when unset.
unsigned int host_worker_count_from_environment();

}  // namespace fstitch::host
