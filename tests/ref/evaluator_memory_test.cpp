// The reference evaluator refuses up front a graph whose intermediates cannot all be held at
// once (8 bytes per element), with an out-of-memory error and nothing written, instead of
// exhausting the machine halfway through.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error_of.hpp"
#include "ir/builder.hpp"
#include "ref/evaluator.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

using testing::error_of;

// y = exp(x) + neg(x) over 1024 f32: x, exp(x) and neg(x) are alive together (3 x 8 KiB);
// x is released once neg(x) is computed, so the add also peaks at 3 x 8 KiB.
Graph three_live_values() {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {1024});
  ValueId e = build_unary(g, OpKind::kExp, x);
  ValueId n = build_unary(g, OpKind::kNeg, x);
  build_output(g, "y", build_binary(g, OpKind::kAdd, e, n));
  return g;
}

TEST(RefEvaluatorMemory, APeakAboveTheLimitIsOutOfMemoryBeforeAnyWork) {
  const Graph g = three_live_values();
  std::vector<float> x(1024, 1.0f), y(1024, -7.0f);
  const Error e = error_of([&] { evaluate_reference(g, {x.data()}, {y.data()}, 3 * 8192 - 1); });
  EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
  const std::string message = e.what();
  EXPECT_NE(message.find("would hold 24576 bytes at once"), std::string::npos) << message;
  EXPECT_NE(message.find("more than the 24575 bytes it may use"), std::string::npos) << message;
  EXPECT_EQ(y, std::vector<float>(1024, -7.0f));  // nothing written
}

TEST(RefEvaluatorMemory, APeakAtTheLimitRuns) {
  const Graph g = three_live_values();
  std::vector<float> x(1024, 0.0f), y(1024, -7.0f);
  evaluate_reference(g, {x.data()}, {y.data()}, 3 * 8192);
  EXPECT_EQ(y, std::vector<float>(1024, 1.0f));  // exp(0) + -0
}

TEST(RefEvaluatorMemory, AGraphLargerThanThisMachineIsOutOfMemory) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {int64_t{1} << 40});  // 8 TiB as doubles, twice
  build_output(g, "y", build_unary(g, OpKind::kExp, x));
  float one = 1.0f, out = 0.0f;
  ASSERT_LT(physical_memory_bytes(), uint64_t{8} << 40);
  const Error e = error_of([&] { evaluate_reference(g, {&one}, {&out}); });
  EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(std::string(e.what()).find("would hold 17592186044416 bytes at once"), std::string::npos)
      << e.what();
  EXPECT_EQ(out, 0.0f);
}

}  // namespace
}  // namespace fstitch
