// Kernels and launches the host backend must refuse or report, never hang on or crash in:
// barrier deadlocks, invalid warp operations, shared memory overflow, __trap, bad launch
// configurations, unknown kernels; and a stack overflow that must fault, not corrupt.
#include <csignal>
#include <limits>
#include <vector>

#include "host_test_support.hpp"

namespace fstitch::host::testing {
namespace {

Error launch_error(const char* kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared = 0,
                   HostLaunchOptions options = {}) {
  std::vector<float> y(4096, 0.0f);
  float* yp = y.data();
  void* params[] = {&yp};
  return catch_error([&] { test_kernels().launch(kernel, grid, block, dynamic_shared, params, options); });
}

TEST(HostErrors, ThreadsExitingBeforeABarrierAreReportedAsDivergence) {
  for (ThreadOrder order : kBothOrders) {
    HostLaunchOptions options;
    options.order = order;
    options.max_workers = 1;  // the first block to start fails first: the last in reverse order
    const Error error = launch_error("fst_early_exit_before_barrier", {2}, {64}, 0, options);
    EXPECT_EQ(error.code(), StatusCode::kLaunch);
    EXPECT_CONTAINS(error.what(), order == ThreadOrder::kForward
                                      ? "kernel 'fst_early_exit_before_barrier' block (0, 0, 0)"
                                      : "kernel 'fst_early_exit_before_barrier' block (1, 0, 0)");
    EXPECT_CONTAINS(error.what(),
                    "barrier divergence: 48 of 64 threads exited while 16 wait at __syncthreads");
  }
}

TEST(HostErrors, AShuffleWaitingForAnExitedLaneIsReported) {
  const Error error = launch_error("fst_lane_exits_before_shuffle", {1}, {32});
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "waits at __shfl_xor_sync on line ");
  EXPECT_CONTAINS(error.what(), "with mask 0xffffffff but lane 5 has exited");
}

TEST(HostErrors, LanesReachingDifferentShuffleCallsAreReported) {
  for (ThreadOrder order : kBothOrders) {
    HostLaunchOptions options;
    options.order = order;
    const Error error = launch_error("fst_divergent_shuffle", {1}, {32}, 0, options);
    EXPECT_EQ(error.code(), StatusCode::kLaunch);
    EXPECT_CONTAINS(error.what(),
                    "divergent warp operation: the lanes of mask 0xffffffff meet at different calls");
    EXPECT_CONTAINS(error.what(), "call on that line");
  }
}

TEST(HostErrors, ThreadsReachingDifferentBarriersAreReported) {
  const Error error = launch_error("fst_different_barriers", {1}, {64});
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(),
                  "barrier divergence: thread (1, 0, 0) (warp 0, lane 1) waits at __syncthreads on line");
  EXPECT_CONTAINS(error.what(), "while thread (0, 0, 0) (warp 0, lane 0) waits at __syncthreads on line");
}

TEST(HostErrors, AFullMaskInAPartialWarpIsRefused) {
  const Error error = launch_error("fst_full_mask_partial_warp", {1}, {48});
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "names lanes that do not exist: the block has 48 threads");
}

TEST(HostErrors, TooMuchStaticSharedMemory) {
  const Error error = launch_error("fst_too_much_shared", {1}, {32});
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "static shared memory does not fit");
  EXPECT_CONTAINS(error.what(), "80000 bytes");
}

TEST(HostErrors, TrapEndsTheLaunch) {
  const Error error = launch_error("fst_traps", {4}, {32});
  EXPECT_EQ(error.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(error.what(), "thread (3, 0, 0) (warp 0, lane 3) called __trap()");
}

TEST(HostErrors, TheRuntimeStillWorksAfterFailedBlocks) {
  for (int k = 0; k < 3; ++k) launch_error("fst_early_exit_before_barrier", {3}, {64});
  std::vector<float> x(64, 2.0f), y(64, 0.0f);
  const float* xp = x.data();
  float* yp = y.data();
  void* params[] = {&xp, &yp};
  test_kernels().launch("fst_left_neighbor", {1}, {64}, 0, params);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(y[t], t == 0 ? 0.0f : 2.0f);
}

TEST(HostErrors, InvalidLaunchConfigurations) {
  struct Case {
    Dim3 grid, block;
    std::size_t dynamic_shared;
    const char* message;
  };
  const Case cases[] = {
      {{1}, {0}, 0, "not a valid block size"},
      {{1}, {1025}, 0, "not a valid block size"},
      {{1}, {32, 32, 2}, 0, "not a valid block size"},
      {{1}, {1, 1, 65}, 0, "not a valid block size"},
      {{0}, {32}, 0, "not a valid grid size"},
      {{1, 65536}, {32}, 0, "not a valid grid size"},
      {{1}, {32}, 227 * 1024 + 1, "dynamic shared memory exceed"},
  };
  for (const Case& c : cases) {
    const Error error = launch_error("fst_traps", c.grid, c.block, c.dynamic_shared);
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_CONTAINS(error.what(), c.message);
  }
  HostLaunchOptions small_stack;
  small_stack.stack_bytes = 1024;
  EXPECT_EQ(launch_error("fst_traps", {1}, {32}, 0, small_stack).code(), StatusCode::kInvalidArgument);
  HostLaunchOptions cooperative;
  cooperative.cooperative = true;
  // 2^20 threads: twice what the host keeps resident.
  const Error too_large = launch_error("fst_traps", {4096}, {256}, 0, cooperative);
  EXPECT_EQ(too_large.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(too_large.what(), "too large to keep resident");
  // 2^54 blocks of 1024 threads: 2^64 threads, which must not wrap to 0 and pass.
  const Error wrapping = launch_error("fst_traps", {1u << 24, 1u << 15, 1u << 15}, {1024}, 0, cooperative);
  EXPECT_EQ(wrapping.code(), StatusCode::kLaunch);
  EXPECT_CONTAINS(wrapping.what(), "(more than 2^64 threads) is too large to keep resident");
}

TEST(HostErrors, UnknownKernelsAndMissingParameters) {
  const HostModule& module = test_kernels();
  EXPECT_TRUE(module.has_kernel("fst_traps"));
  EXPECT_FALSE(module.has_kernel("fst_nope"));
  EXPECT_FALSE(module.has_kernel("fst_traps; rm"));
  float* none = nullptr;
  void* params[] = {&none};
  const Error unknown = catch_error([&] { module.launch("fst_nope", {1}, {32}, 0, params); });
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(unknown.what(), "no kernel 'fst_nope'");
  const Error no_params = catch_error([&] { module.launch("fst_traps", {1}, {32}, 0, nullptr); });
  EXPECT_EQ(no_params.code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(no_params.what(), "params is NULL but the kernel takes 1 parameters");
  module.launch("fst_no_params", {2}, {32}, 0, nullptr);
}

TEST(HostErrors, DeepRecursionWithinTheStackSucceeds) {
  std::vector<int> out(32, -1);
  int depth = 20;
  int* op = out.data();
  void* params[] = {&depth, &op};
  test_kernels().launch("fst_recurse", {1}, {32}, 0, params);
  for (int v : out) EXPECT_EQ(v, 20 * 21 / 2);
}

// Recursion far deeper than the stack: the guard page below it must stop it with SIGSEGV.
void overflow_the_stack() {
  std::vector<int> out(32, -1);
  int depth = 100000;  // about 50 MB of frames on a 64 KiB stack
  int* op = out.data();
  void* params[] = {&depth, &op};
  test_kernels().launch("fst_recurse", {1}, {32}, 0, params);
}

TEST(HostErrorsDeathTest, StackOverflowHitsTheGuardPage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(overflow_the_stack(), died_of_fault, "");
}

}  // namespace
}  // namespace fstitch::host::testing
