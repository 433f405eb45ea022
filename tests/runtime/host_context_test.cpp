// The fiber context switch on its own: control and state survive switches, each context
// keeps its own floating-point control state, and what a switch costs.
#include <gtest/gtest.h>

#include <cfenv>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "host_test_support.hpp"
#include "runtime/host/context.hpp"
#include "runtime/host/fiber_stacks.hpp"

namespace fstitch::host {
namespace {

struct PingPong {
  Context main;
  Context fiber;
  long counter = 0;
  long rounds = 0;
  int fiber_rounding = -1;  // what the fiber saw after being resumed
};

void ping_pong_fiber(void* arg) {
  auto& p = *static_cast<PingPong*>(arg);
  for (long i = 0; i < p.rounds; ++i) {
    p.counter += 2;  // resumed where it left off, with its locals intact
    Context::switch_to(p.fiber, p.main);
  }
  Context::switch_to(p.fiber, p.main, true);
}

TEST(HostContext, SwitchesResumeWhereEachSideLeftOff) {
  FiberStacks stacks;
  stacks.reserve(1, 64 * 1024);
  PingPong p;
  p.rounds = 1000;
  p.fiber.prepare(stacks.stack_low(0), stacks.stack_bytes(), &ping_pong_fiber, &p);
  for (long i = 0; i < p.rounds; ++i) {
    const long before = p.counter;
    Context::switch_to(p.main, p.fiber);
    ASSERT_EQ(p.counter, before + 2);
  }
  Context::switch_to(p.main, p.fiber);  // the fiber's last switch
  EXPECT_EQ(p.counter, 2 * p.rounds);
}

void rounding_fiber(void* arg) {
  auto& p = *static_cast<PingPong*>(arg);
  std::fesetround(FE_UPWARD);
  Context::switch_to(p.fiber, p.main);
  p.fiber_rounding = std::fegetround();
  Context::switch_to(p.fiber, p.main, true);
}

TEST(HostContext, EachContextKeepsItsFloatingPointControl) {
  FiberStacks stacks;
  stacks.reserve(1, 64 * 1024);
  PingPong p;
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  p.fiber.prepare(stacks.stack_low(0), stacks.stack_bytes(), &rounding_fiber, &p);
  Context::switch_to(p.main, p.fiber);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST) << "the fiber's rounding mode leaked into the main context";
  Context::switch_to(p.main, p.fiber);
  EXPECT_EQ(p.fiber_rounding, FE_UPWARD) << "the fiber lost its rounding mode";
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(HostContext, StacksAreSeparateAndWritable) {
  FiberStacks stacks;
  stacks.reserve(3, 20000);
  EXPECT_EQ(stacks.count(), 3u);
  EXPECT_GE(stacks.stack_bytes(), 20000u);
  for (std::size_t i = 0; i < 3; ++i) {
    char* low = stacks.stack_low(i);
    low[0] = 1;
    low[stacks.stack_bytes() - 1] = 2;
    if (i > 0) {
      EXPECT_GT(low, stacks.stack_low(i - 1) + stacks.stack_bytes()) << "no guard page between stacks";
    }
  }
}

TEST(HostContextDeathTest, TheGuardPageBelowAStackFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FiberStacks stacks;
  stacks.reserve(2, 64 * 1024);
  volatile char* below_second = stacks.stack_low(1) - 1;  // the top byte of its guard page
  EXPECT_EXIT(*below_second = 1, testing::died_of_fault, "");
}

// Not a pass/fail check: prints the cost of one switch.
TEST(HostContext, ReportsTheSwitchCost) {
  FiberStacks stacks;
  stacks.reserve(1, 64 * 1024);
  PingPong p;
  p.rounds = 2000000;
  p.fiber.prepare(stacks.stack_low(0), stacks.stack_bytes(), &ping_pong_fiber, &p);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i <= p.rounds; ++i) Context::switch_to(p.main, p.fiber);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(p.counter, 2 * p.rounds);
  std::printf("[ host ] %s context switch: %.1f ns\n", Context::mechanism(),
              seconds * 1e9 / (2.0 * p.rounds));
}

}  // namespace
}  // namespace fstitch::host
