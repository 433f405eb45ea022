// Synchronization on the host backend: barriers and thread order, shared memory, a grid
// barrier in a cooperative launch, atomics across blocks, concurrent launches, and what a
// switch between threads costs.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>
#include <vector>

#include "host_test_support.hpp"

namespace fstitch::host::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Runs a left-neighbour kernel over 3 blocks of 64 and counts wrong elements.
int wrong_left_neighbors(const char* kernel, ThreadOrder order) {
  const std::vector<float> x = random_floats(3 * 64, 1.0f, 2.0f, 7);
  std::vector<float> y(x.size(), kNaN);
  const float* xp = x.data();
  float* yp = y.data();
  void* params[] = {&xp, &yp};
  HostLaunchOptions options;
  options.order = order;
  test_kernels().launch(kernel, {3}, {64}, 0, params, options);
  int wrong = 0;
  for (int i = 0; i < 3 * 64; ++i) {
    const float want = i % 64 == 0 ? 0.0f : x[i - 1];
    if (!(y[i] == want)) ++wrong;
  }
  return wrong;
}

TEST(HostSync, TheReverseOrderExposesAMissingBarrier) {
  // Forward order happens to run each left neighbour first; reverse order reads shared
  // memory nobody wrote yet, which holds NaN.
  EXPECT_EQ(wrong_left_neighbors("fst_left_neighbor_unsynced", ThreadOrder::kForward), 0);
  EXPECT_EQ(wrong_left_neighbors("fst_left_neighbor_unsynced", ThreadOrder::kReverse), 3 * 63);
  EXPECT_EQ(wrong_left_neighbors("fst_left_neighbor", ThreadOrder::kForward), 0);
  EXPECT_EQ(wrong_left_neighbors("fst_left_neighbor", ThreadOrder::kReverse), 0);
}

TEST(HostSync, DynamicSharedMemoryStartsAsNaNInEveryBlock) {
  const int threads = 48, blocks = 5;
  const std::vector<float> x = random_floats(threads * blocks, -1.0f, 1.0f, 9);
  for (ThreadOrder order : kBothOrders) {
    std::vector<float> y(x.size(), 0.0f), unwritten(blocks, 0.0f);
    const float* xp = x.data();
    float* yp = y.data();
    float* up = unwritten.data();
    void* params[] = {&xp, &yp, &up};
    HostLaunchOptions options;
    options.order = order;
    options.max_workers = 1;  // one executor runs every block: each must start refilled
    test_kernels().launch("fst_reverse_dynamic", {blocks}, {threads}, (threads + 1) * sizeof(float), params,
                          options);
    for (int b = 0; b < blocks; ++b) {
      EXPECT_TRUE(std::isnan(unwritten[b])) << "block " << b;
      for (int t = 0; t < threads; ++t)
        EXPECT_EQ(y[b * threads + t], x[b * threads + threads - 1 - t])
            << b << " " << t << " " << order_name(order);
    }
  }
}

// Runs fst_grid_total as a cooperative grid of `blocks` blocks of 64 threads, `per_block`
// whole numbers each (their sum is exact in any order), and returns how many blocks got a
// total other than the sum; the arrival counter must count every block.
int wrong_grid_totals(int blocks, int per_block, std::uint32_t seed, HostLaunchOptions options) {
  const std::vector<float> x = random_whole_floats(static_cast<size_t>(blocks * per_block), -20, 20, seed);
  float total = 0;
  for (float v : x) total += v;
  std::vector<float> partial(static_cast<size_t>(blocks), kNaN), totals(static_cast<size_t>(blocks), kNaN);
  unsigned int counter = 0;
  const float* xp = x.data();
  float* pp = partial.data();
  float* tp = totals.data();
  unsigned int* cp = &counter;
  int n = per_block;
  void* params[] = {&xp, &pp, &tp, &cp, &n};
  options.cooperative = true;
  test_kernels().launch("fst_grid_total", {static_cast<unsigned int>(blocks)}, {64}, 0, params, options);
  EXPECT_EQ(counter, static_cast<unsigned int>(blocks));
  int wrong = 0;
  for (float t : totals) wrong += t == total ? 0 : 1;
  return wrong;
}

TEST(HostSync, GridBarrierInACooperativeLaunchWithMoreBlocksThanWorkers) {
  for (unsigned int workers : {1u, 2u}) {
    for (ThreadOrder order : kBothOrders) {
      HostLaunchOptions options;
      options.order = order;
      options.max_workers = workers;
      EXPECT_EQ(wrong_grid_totals(8, 200, 13, options), 0) << workers << " workers, " << order_name(order);
    }
  }
}

// 40960 threads wait at one grid barrier: their stacks, each above a guard page, would take
// 81920 memory mappings, more than a process may have by default (65530), so blocks beyond
// the guarded budget take turns on shared guarded stacks.
TEST(HostSync, GridBarrierOverMoreThreadsThanGuardedStacks) {
  const int blocks = 640;
  static_assert(blocks * 64 > kMaxGuardedThreads, "the grid must exceed the guarded stacks");
  for (ThreadOrder order : kBothOrders) {
    HostLaunchOptions options;
    options.order = order;
    options.stack_bytes = kMinStackBytes;
    EXPECT_EQ(wrong_grid_totals(blocks, 96, 31, options), 0) << order_name(order);
  }
}

TEST(HostSync, AtomicsFromManyBlocks) {
  const int n = 20000;
  const std::vector<float> x = random_whole_floats(n, 1, 50, 17);
  double want_sum = 0;
  float want_max = 0, want_min = 1000;
  for (float v : x) {
    want_sum += v;
    want_max = std::max(want_max, v);
    want_min = std::min(want_min, v);
  }
  float fsum = 0;
  double dsum = 0;
  int count = 0, imax = -1;
  unsigned int umin = 0xffffffffu;
  unsigned long long usum = 0;
  const float* xp = x.data();
  int size = n;
  float* fp = &fsum;
  double* dp = &dsum;
  int* cp = &count;
  int* mp = &imax;
  unsigned int* up = &umin;
  unsigned long long* sp = &usum;
  void* params[] = {&xp, &size, &fp, &dp, &cp, &mp, &up, &sp};
  test_kernels().launch("fst_atomics", {40}, {128}, 0, params);
  EXPECT_EQ(static_cast<double>(fsum), want_sum);  // below 2^24: exact in any order
  EXPECT_EQ(dsum, want_sum);
  EXPECT_EQ(count, n);
  EXPECT_EQ(imax, static_cast<int>(want_max));
  EXPECT_EQ(umin, static_cast<unsigned int>(want_min));
  EXPECT_EQ(usum, static_cast<unsigned long long>(want_sum));
}

TEST(HostSync, LaunchesFromSeveralThreadsAtOnce) {
  const HostModule& module = test_kernels();
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, -1);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&module, &wrong, k] {
      const int rows = 9, cols = 64;
      const std::vector<float> x = random_whole_floats(rows * cols, -5, 5, 100 + k);
      int bad = 0;
      for (int repeat = 0; repeat < 5; ++repeat) {
        std::vector<float> y(rows, kNaN);
        const float* xp = x.data();
        float* yp = y.data();
        int r = rows, c = cols;
        void* params[] = {&xp, &yp, &r, &c};
        module.launch("fst_segment_row_sum", {3}, {32}, 0, params);
        for (int row = 0; row < rows; ++row) {
          float want = 0;
          for (int i = 0; i < cols; ++i) want += x[row * cols + i];
          if (!(y[row] == want)) ++bad;
        }
      }
      wrong[k] = bad;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(wrong[k], 0) << "thread " << k;
}

// Not a pass/fail check: prints what a switch between the threads of a block costs.
TEST(HostSync, ReportsTheCostOfSwitchingThreads) {
  for (unsigned int threads : {32u, 128u, 1024u}) {
    int iterations = 2000;
    std::vector<int> out(threads, -1);
    int* op = out.data();
    void* params[] = {&iterations, &op};
    HostLaunchOptions options;
    options.max_workers = 1;
    const auto start = std::chrono::steady_clock::now();
    test_kernels().launch("fst_barrier_loop", {1}, {threads}, 0, params, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (unsigned int t = 0; t < threads; ++t) ASSERT_EQ(out[t], static_cast<int>(t) * iterations);
    const double switches = static_cast<double>(threads) * iterations;
    std::printf("[ host ] %u threads x %d barriers: %.1f ns per thread switch (incl. barrier bookkeeping)\n",
                threads, iterations, seconds * 1e9 / switches);
  }
}

// Clusters: the blocks of a cluster are resident together, meet at the cluster barrier and
// read each other's shared memory, in both thread orders.
TEST(HostSync, ClustersMeetAndShareTheirSharedMemory) {
  const int cluster = 4, blocks = 12, threads = 64;
  for (ThreadOrder order : kBothOrders) {
    std::vector<int> out(blocks * threads, -1);
    int* op = out.data();
    int c = cluster;
    void* params[] = {&c, &op};
    HostLaunchOptions options;
    options.order = order;
    options.cluster_blocks = cluster;
    test_kernels().launch("fst_cluster_ring", {blocks}, {threads}, 0, params, options);
    for (int b = 0; b < blocks; ++b) {
      const int next = b / cluster * cluster + (b % cluster + 1) % cluster;
      for (int t = 0; t < threads; ++t) ASSERT_EQ(out[b * threads + t], next) << "block " << b << " thread " << t;
    }
  }
}

TEST(HostSync, ClusterMistakesAreLaunchErrors) {
  int value = 0;
  int* vp = &value;
  void* params[] = {&vp};
  HostLaunchOptions options;
  options.cluster_blocks = 2;
  Error error = catch_error([&] { test_kernels().launch("fst_cluster_bad_rank", {2}, {32}, 0, params, options); });
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "cluster rank 99, but its cluster has 2 block(s)");
  error = catch_error([&] { test_kernels().launch("fst_cluster_early_exit", {4}, {32}, 0, nullptr, options); });
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "exited without reaching");
  options.cluster_blocks = 3;
  error = catch_error([&] { test_kernels().launch("fst_no_params", {4}, {32}, 0, nullptr, options); });
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(error.what(), "multiple of the cluster size");
}

}  // namespace
}  // namespace fstitch::host::testing
