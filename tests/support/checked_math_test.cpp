// Overflow-checked size arithmetic: results that fit, overflows reported (never wrapped), and
// failures carrying their status and a message built only when they happen.
#include "support/checked_math.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace fstitch {
namespace {

constexpr int64_t kTwoTo62 = int64_t{1} << 62;

TEST(CheckedMath, AddAndMulReportOverflow) {
  EXPECT_EQ(checked_add<int64_t>(kTwoTo62, kTwoTo62 - 1).value(), INT64_MAX);
  EXPECT_FALSE(checked_add<int64_t>(kTwoTo62, kTwoTo62).has_value());
  EXPECT_EQ(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 31).value(), uint64_t{1} << 63);
  EXPECT_FALSE(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32).has_value());
  // f64[2^61 + 32]: 2^64 + 256 bytes.
  EXPECT_FALSE(checked_mul<size_t>((size_t{1} << 61) + 32, 8).has_value());
}

TEST(CheckedMath, FailuresCarryTheirStatusAndMessage) {
  int built = 0;
  auto message = [&] {
    ++built;
    return std::string("too large");
  };
  EXPECT_EQ(add_or_fail<uint64_t>(1, 2, StatusCode::kOutOfMemory, message), 3u);
  EXPECT_EQ(mul_or_fail<uint64_t>(3, 4, StatusCode::kOutOfMemory, message), 12u);
  EXPECT_EQ(built, 0) << "the message is built only on failure";
  try {
    add_or_fail<uint64_t>(~uint64_t{0}, 1, StatusCode::kOutOfMemory, message);
    ADD_FAILURE() << "no overflow reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
    EXPECT_STREQ(e.what(), "too large");
  }
  try {
    mul_or_fail<int64_t>(int64_t{1} << 32, int64_t{1} << 31, StatusCode::kShape, message);
    ADD_FAILURE() << "no overflow reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kShape);
  }
  EXPECT_EQ(built, 2);
}

}  // namespace
}  // namespace fstitch
