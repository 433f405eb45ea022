// Parsing the ptxas -v report out of NVRTC logs of both known layouts.
#include <gtest/gtest.h>

#include "jit/resource_report.hpp"

namespace fstitch::jit {
namespace {

TEST(ResourceReport, ParsesTheCuda13Layout) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
      "ptxas info    : Function properties for k1\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 14 registers, used 1 barriers, 128 bytes smem\n"
      "ptxas info    : Compile time = 5.676 ms\n"
      "ptxas info    : Function properties for _ZN4help6squareEf\n"
      "ptxas         .     16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k0' for 'sm_90'\n"
      "ptxas info    : Function properties for k0\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 9 registers, used 0 barriers\n";
  const std::vector<FunctionResources> report = parse_ptxas_report(log);
  ASSERT_EQ(report.size(), 3u);

  EXPECT_EQ(report[0].name, "k1");
  EXPECT_TRUE(report[0].entry);
  EXPECT_EQ(report[0].registers, 14);
  EXPECT_EQ(report[0].barriers, 1);
  EXPECT_EQ(report[0].shared_bytes, 128);
  EXPECT_EQ(report[0].stack_frame_bytes, 0);

  EXPECT_EQ(report[1].name, "_ZN4help6squareEf");
  EXPECT_FALSE(report[1].entry);
  EXPECT_EQ(report[1].registers, 0);
  EXPECT_EQ(report[1].stack_frame_bytes, 16);

  const FunctionResources* k0 = find_function(report, "k0");
  ASSERT_NE(k0, nullptr);
  EXPECT_TRUE(k0->entry);
  EXPECT_EQ(k0->registers, 9);
  EXPECT_EQ(k0->shared_bytes, 0);
  EXPECT_EQ(find_function(report, "k2"), nullptr);
}

TEST(ResourceReport, ParsesTheCuda12LayoutWithSpills) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'big' for 'sm_80'\n"
      "ptxas info    : Function properties for big\n"
      "    4096 bytes stack frame, 712 bytes spill stores, 688 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 49152 bytes smem, 380 bytes cmem[0]\n";
  const std::vector<FunctionResources> report = parse_ptxas_report(log);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].registers, 255);
  EXPECT_EQ(report[0].shared_bytes, 49152);
  EXPECT_EQ(report[0].barriers, 0);
  EXPECT_EQ(report[0].stack_frame_bytes, 4096);
  EXPECT_EQ(report[0].spill_store_bytes, 712);
  EXPECT_EQ(report[0].spill_load_bytes, 688);
}

TEST(ResourceReport, IgnoresOtherTextAndHugeNumbers) {
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(
      parse_ptxas_report("prog.cu(3): warning: variable \"x\" was declared but never referenced\n").empty());
  const std::vector<FunctionResources> report = parse_ptxas_report(
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Used 99999999999999999999999 registers, used 0 barriers\n");
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].registers, 0);
}

}  // namespace
}  // namespace fstitch::jit
