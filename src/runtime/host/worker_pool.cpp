#include "runtime/host/worker_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "support/error.hpp"

namespace fstitch::host {
namespace {

constexpr unsigned int kMaxWorkers = 1024;

// Owns the pool; after fork() the child gets a pool of its own, since the parent's worker
// threads do not exist there (the parent's pool object is then left alone, never joined).
struct PoolHolder {
  std::unique_ptr<WorkerPool> pool;
  pid_t owner = 0;
  ~PoolHolder() {
    if (pool && owner != getpid()) static_cast<void>(pool.release());
  }
};

}  // namespace

BlockExecutor& WorkerContext::executor(std::size_t slot) {
  while (executors_.size() <= slot) executors_.push_back(std::make_unique<BlockExecutor>());
  return *executors_[slot];
}

SharedStacks& WorkerContext::shared_stacks(std::size_t slot) {
  while (shared_stacks_.size() <= slot) shared_stacks_.push_back(std::make_unique<SharedStacks>());
  return *shared_stacks_[slot];
}

void WorkerContext::trim(std::size_t keep) {
  for (const std::unique_ptr<BlockExecutor>& e : executors_) e->share_stacks(nullptr);
  if (executors_.size() > keep) executors_.resize(keep);
  shared_stacks_.clear();
}

unsigned int host_worker_count_from_environment() {
  const char* text = std::getenv("FSTITCH_HOST_THREADS");
  if (text == nullptr || *text == '\0') {
    const unsigned int hardware = std::thread::hardware_concurrency();
    return hardware == 0 ? 1 : std::min(hardware, kMaxWorkers);
  }
  unsigned long value = 0;
  bool valid = true;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || value > kMaxWorkers) {
      valid = false;
      break;
    }
    value = value * 10 + static_cast<unsigned long>(*p - '0');
  }
  if (!valid || value < 1 || value > kMaxWorkers) {
    fail(StatusCode::kInvalidArgument, std::string("FSTITCH_HOST_THREADS='") + text +
                                           "': expected the number of host worker threads, from 1 to " +
                                           std::to_string(kMaxWorkers));
  }
  return static_cast<unsigned int>(value);
}

WorkerPool& WorkerPool::instance() {
  static std::mutex mutex;
  static PoolHolder holder;
  std::lock_guard<std::mutex> lock(mutex);
  if (holder.pool && holder.owner != getpid()) static_cast<void>(holder.pool.release());
  if (!holder.pool) {
    holder.pool = std::make_unique<WorkerPool>(host_worker_count_from_environment());
    holder.owner = getpid();
  }
  return *holder.pool;
}

WorkerPool::WorkerPool(unsigned int threads) {
  threads_.reserve(threads);
  for (unsigned int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void WorkerPool::run(unsigned int count, const Task& task) {
  if (count == 0) return;
  Job job{&task, count, 0, count, nullptr, {}};
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.push_back(&job);
  wake_.notify_all();
  job.done.wait(lock, [&] { return job.remaining == 0; });
  if (job.error) std::rethrow_exception(job.error);
}

void WorkerPool::work() {
  WorkerContext worker;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    Job* job = jobs_.front();
    const unsigned int index = job->next++;
    if (job->next == job->count) jobs_.pop_front();
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job->task)(worker, index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !job->error) job->error = error;
    if (--job->remaining == 0) job->done.notify_all();
  }
}

}  // namespace fstitch::host
