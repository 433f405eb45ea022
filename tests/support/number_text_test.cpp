// Numbers as text: exact, shortest, and independent of the process locale.
#include "support/number_text.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace fstitch {
namespace {

TEST(NumberText, ShortestTextReadsBackExactly) {
  for (double x :
       {0.1, 0.25, 1e10, -3.0, 1.0 / 3.0, 9.9999999747524271e-07, 5e-324, 1.7976931348623157e308}) {
    const std::string text = shortest_text(x);
    double back = 0;
    std::from_chars(text.data(), text.data() + text.size(), back);
    EXPECT_EQ(back, x) << text;
  }
  EXPECT_EQ(shortest_text(0.25), "0.25");
  EXPECT_EQ(shortest_text(0.1f), "0.1");
  EXPECT_EQ(shortest_text(-0.0), "-0");
  EXPECT_EQ(shortest_text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(shortest_text(std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0)), "-nan");
}

TEST(NumberText, FixedAndGeneralFollowPrintfInTheCLocale) {
  EXPECT_EQ(fixed_text(12.345, 2), "12.35");
  EXPECT_EQ(fixed_text(0.004, 2), "0.00");
  EXPECT_EQ(fixed_text(1e6, 1), "1000000.0");
  EXPECT_EQ(general_text(0.1, 17), "0.10000000000000001");
  EXPECT_EQ(general_text(-9.2233720368547758e18, 17), "-9.2233720368547758e+18");
}

TEST(NumberText, HexText) {
  EXPECT_EQ(hex_text(0xffc00000u), "0xffc00000");
  EXPECT_EQ(hex_text(0), "0x0");
  EXPECT_EQ(hex_text(UINT64_MAX), "0xffffffffffffffff");
}

}  // namespace
}  // namespace fstitch
