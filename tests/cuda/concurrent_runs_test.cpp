// Several threads running one fusion at once, the first run from all of them together:
// every launch arrives, each kernel is loaded once, and nothing fails.
#include <atomic>
#include <condition_variable>
#include <thread>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

class ConcurrentRuns : public CudaSeamTest {};

TEST_F(ConcurrentRuns, EightThreadsFiftyRunsEach) {
  constexpr int kThreads = 8;
  constexpr int kRuns = 50;
  ContextPtr context = cuda_context();
  GraphPtr graph = layer_norm_graph(context.get(), 8, 64);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_LOOP);
  size_t kernels = 0;
  ASSERT_EQ(fst_fusion_kernel_count(fusion.get(), &kernels), FST_OK);
  ASSERT_GE(kernels, 2u);

  // Every thread starts its first run when all are ready.
  std::mutex mutex;
  std::condition_variable ready;
  int waiting = 0;
  std::atomic<int> failures{0};
  std::vector<std::string> messages;
  auto body = [&] {
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (++waiting == kThreads) ready.notify_all();
      ready.wait(lock, [&] { return waiting == kThreads; });
    }
    RunBuffers buffers(graph.get());
    for (int i = 0; i < kRuns; ++i) {
      if (run(fusion.get(), buffers, nullptr, nullptr) != FST_OK) {
        ++failures;
        std::lock_guard<std::mutex> lock(mutex);
        messages.push_back(fst_last_error_message());
      }
    }
    EXPECT_EQ(fake().context_stack_depth(), 0);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(failures.load(), 0) << (messages.empty() ? "" : messages.front());
  const auto launches = fake().launches();
  EXPECT_EQ(launches.size(), kThreads * kRuns * kernels);
  EXPECT_EQ(fake().call_count("cuLibraryLoadData"), kernels);
  EXPECT_EQ(fake().libraries().size(), kernels);
  void* primary = fake().primary_context(0);
  for (const auto& launch : launches) ASSERT_EQ(launch.context, primary);
  EXPECT_EQ(fake().primary_retain_count(0), 1);
  EXPECT_EQ(fake().live_allocation_count(), 0u);
}

}  // namespace
}  // namespace fstitch::cuda_test
