// The SASS parser on listings nvdisasm and cuobjdump wrote: a captured fstitch kernel (the
// bf16 column sum for sm_90, in testdata/) and small hand-checked excerpts.
#include "sass_summary.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fstitch::bench {
namespace {

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(FSTITCH_BENCH_TESTDATA) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SassSummary, AccessWidthsOfLoadAndStoreOpcodes) {
  EXPECT_EQ(global_access_bits("LDG.E.128.CONSTANT", "LDG"), 128);
  EXPECT_EQ(global_access_bits("LDG.E.64", "LDG"), 64);
  EXPECT_EQ(global_access_bits("LDG.E", "LDG"), 32);
  EXPECT_EQ(global_access_bits("LDG.E.U16.CONSTANT", "LDG"), 16);
  EXPECT_EQ(global_access_bits("LDG.E.S8", "LDG"), 8);
  EXPECT_EQ(global_access_bits("LDG.E.LTC128B.128", "LDG"), 128);  // an L2 hint is not a width
  EXPECT_EQ(global_access_bits("LDG.E.LTC128B", "LDG"), 32);
  EXPECT_EQ(global_access_bits("STG.E.U16", "STG"), 16);
  EXPECT_EQ(global_access_bits("STG.E.ENL2.256", "STG"), 256);
  EXPECT_EQ(global_access_bits("LDG.E", "STG"), 0);
  EXPECT_EQ(global_access_bits("LDGSTS.E.128", "LDG"), 0);  // an asynchronous copy to shared memory
  EXPECT_EQ(global_access_bits("LDS.128", "LDG"), 0);
}

TEST(SassSummary, CapturedColumnSumKernel) {
  const std::vector<SassFunction> functions = parse_sass(testdata("bias_grad_column_sum_bf16_sm90.sass"));
  ASSERT_EQ(functions.size(), 1u);
  const SassFunction& f = functions[0];
  EXPECT_EQ(f.name, "fst_k0");
  // /*0000*/ to the EXIT at /*0670*/; the NOPs and the closing BRA to itself do not count.
  EXPECT_EQ(f.instructions, 0x670 / 16 + 1);
  EXPECT_EQ(f.loads.text(), "16x16");
  EXPECT_EQ(f.stores.text(), "1x16");
  EXPECT_EQ(f.loads.bytes(), 32);
  EXPECT_EQ(f.atomics, 0);
  // The loop over the block's columns (.L_x_3, /*0090*/ to /*0660*/) holds the loop over
  // rows (.L_x_0, /*01a0*/ to /*0500*/, sixteen rows unrolled): the inner one is the main loop.
  ASSERT_EQ(f.loops.size(), 2u);
  ASSERT_GE(f.main_loop, 0);
  const SassLoop& main = f.loops[static_cast<size_t>(f.main_loop)];
  EXPECT_EQ(main.head_address, 0x1a0);
  EXPECT_EQ(main.end_address, 0x500);
  EXPECT_TRUE(main.innermost);
  EXPECT_EQ(main.instructions, (0x500 - 0x1a0) / 16 + 1);
  EXPECT_EQ(main.loads.text(), "16x16");
  EXPECT_EQ(main.stores.text(), "-");
  const SassLoop& outer = f.loops[static_cast<size_t>(1 - f.main_loop)];
  EXPECT_FALSE(outer.innermost);
  EXPECT_EQ(outer.instructions, (0x660 - 0x90) / 16 + 1);
  EXPECT_EQ(outer.stores.text(), "1x16");
  EXPECT_EQ(find_sass_function(functions, "fst_k0"), &functions[0]);
  EXPECT_EQ(find_sass_function(functions, "fst_k1"), nullptr);
}

// An excerpt of nvdisasm -c: two functions, vectorized accesses, a predicated branch back,
// a shuffle, shared memory, a barrier and a global reduction.
constexpr const char* kTwoFunctions = R"(
//--------------------- .text.first              --------------------------
first:
.text.first:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   LDG.E.128.CONSTANT R4, desc[UR4][R6.64] ;
        /*0020*/                   LDG.E.64 R8, desc[UR4][R10.64] ;
        /*0030*/                   SHFL.BFLY PT, R3, R2, 0x10, 0x1f ;
        /*0040*/                   STS [R0], R3 ;
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0060*/                   STG.E.128 desc[UR4][R8.64], R4 ;
        /*0070*/               @P1 BRA `(.L_x_1) ;
        /*0080*/                   RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5 ;
        /*0090*/                   EXIT ;
.L_x_2:
        /*00a0*/                   BRA `(.L_x_2);
        /*00b0*/                   NOP;
//--------------------- .text.second             --------------------------
second:
        /*0000*/                   STG.E.U8 desc[UR4][R2.64], R0 ;
        /*0010*/                   EXIT ;
)";

TEST(SassSummary, CountsEachFunctionOfAListing) {
  const std::vector<SassFunction> functions = parse_sass(kTwoFunctions);
  ASSERT_EQ(functions.size(), 2u);
  const SassFunction& first = functions[0];
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(first.instructions, 10);
  EXPECT_EQ(first.loads.text(), "1x128 1x64");
  EXPECT_EQ(first.loads.bytes(), 24);
  EXPECT_EQ(first.stores.text(), "1x128");
  EXPECT_EQ(first.atomics, 1);
  EXPECT_EQ(first.shuffles, 1);
  EXPECT_EQ(first.shared_accesses, 1);
  EXPECT_EQ(first.barriers, 1);
  ASSERT_EQ(first.loops.size(), 1u);
  EXPECT_EQ(first.main_loop, 0);
  EXPECT_EQ(first.loops[0].instructions, 7);
  EXPECT_EQ(first.loops[0].stores.text(), "1x128");
  const SassFunction& second = functions[1];
  EXPECT_EQ(second.instructions, 2);
  EXPECT_EQ(second.stores.text(), "1x8");
  EXPECT_EQ(second.loads.text(), "-");
  EXPECT_EQ(second.main_loop, -1);
}

// cuobjdump -sass names functions with "Function : ", prints each instruction's encoding
// beside it and on a second line, and gives branch targets as addresses.
constexpr const char* kCuobjdump = R"SASS(
	code for sm_90
		Function : fst_k0
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;              /* 0x00000a00ff017b82 */
                                                                       /* 0x000fe40000000800 */
        /*0010*/                   LDG.E.64 R4, desc[UR4][R2.64] ;     /* 0x0000000402047981 */
                                                                       /* 0x000ea8000c1e1b00 */
        /*0020*/                   STG.E.64 desc[UR4][R6.64], R4 ;     /* 0x0000000406007986 */
                                                                       /* 0x004fe2000c101b04 */
        /*0030*/               @P0 BRA 0x10 ;                          /* 0xfffffffc00f40947 */
                                                                       /* 0x000fea000383ffff */
        /*0040*/                   EXIT ;                              /* 0x000000000000794d */
                                                                       /* 0x000fea0003800000 */
        /*0050*/                   BRA 0x50;                           /* 0xfffffffc00fc7947 */
                                                                       /* 0x000fc0000383ffff */
)SASS";

TEST(SassSummary, ReadsCuobjdumpListings) {
  const std::vector<SassFunction> functions = parse_sass(kCuobjdump);
  ASSERT_EQ(functions.size(), 1u);
  EXPECT_EQ(functions[0].name, "fst_k0");
  EXPECT_EQ(functions[0].instructions, 5);
  EXPECT_EQ(functions[0].loads.text(), "1x64");
  ASSERT_EQ(functions[0].loops.size(), 1u);
  EXPECT_EQ(functions[0].loops[0].instructions, 3);
}

TEST(SassSummary, TextWithoutInstructionsGivesNothing) {
  EXPECT_TRUE(parse_sass("").empty());
  EXPECT_TRUE(parse_sass("nvdisasm error: not an ELF file\n").empty());
  const std::vector<SassFunction> empty = parse_sass("//--------------------- .text.k ----\n");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].instructions, 0);
}

}  // namespace
}  // namespace fstitch::bench
