// Compiling kernel texts with NVRTC: PTX, CUBIN, the resource report, errors.
#include <gtest/gtest.h>

#include <string>

#include "jit/compile.hpp"
#include "jit_test_support.hpp"
#include "support/error.hpp"

namespace fstitch::jit {
namespace {

using testing::kThreeKernelNames;
using testing::three_kernel_source;

constexpr uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
constexpr uint16_t kElfMachineCuda = 190;  // EM_CUDA

class CompileForArch : public ::testing::TestWithParam<int> {};

TEST_P(CompileForArch, ThreeKernelsGivePtxCubinAndResources) {
  const int arch = GetParam();
  CompileRequest request;
  request.source = three_kernel_source();
  request.name = "three_kernels.cu";
  request.arch = arch;
  const CompiledModule module = compile_program(*system_nvrtc(), request);

  EXPECT_NE(module.ptx.find(".target sm_" + std::to_string(arch)), std::string::npos);
  for (const std::string& kernel : kThreeKernelNames) {
    EXPECT_NE(module.ptx.find(".entry " + kernel + "("), std::string::npos) << kernel;
  }
  EXPECT_EQ(module.ptx.find('\0'), std::string::npos) << "no NUL inside the PTX text";

  ASSERT_GE(module.cubin.size(), 64u);
  EXPECT_TRUE(std::equal(std::begin(kElfMagic), std::end(kElfMagic), module.cubin.begin()));
  EXPECT_EQ(module.cubin[4], 2) << "64-bit ELF";
  EXPECT_EQ(module.cubin[18] | (module.cubin[19] << 8), kElfMachineCuda);

  EXPECT_NE(module.log.find("for 'sm_" + std::to_string(arch) + "'"), std::string::npos) << module.log;
  for (const std::string& kernel : kThreeKernelNames) {
    const FunctionResources* function = find_function(module.resources, kernel);
    ASSERT_NE(function, nullptr) << kernel << " missing from\n" << module.log;
    EXPECT_TRUE(function->entry);
    EXPECT_GT(function->registers, 0) << kernel;
    EXPECT_LE(function->registers, 255) << kernel;
    EXPECT_EQ(function->spill_store_bytes, 0) << kernel;
    EXPECT_EQ(function->spill_load_bytes, 0) << kernel;
    EXPECT_EQ(function->stack_frame_bytes, 0) << kernel;
  }
  // Eight warps' partial maxima in shared memory: 8 floats.
  EXPECT_EQ(find_function(module.resources, "fst_row_max_block")->shared_bytes, 32);
  EXPECT_EQ(find_function(module.resources, "fst_row_sum_warp")->shared_bytes, 0);
  EXPECT_EQ(find_function(module.resources, "fst_scale_f4")->shared_bytes, 0);
}

INSTANTIATE_TEST_SUITE_P(Sm80AndSm90, CompileForArch, ::testing::Values(80, 90));

TEST(Compile, PtxEqualsAComputeArchCompile) {
  const std::string source = testing::single_kernel_source("fst_twice", 2);
  CompileRequest request;
  request.source = source;
  request.name = "twice.cu";
  request.arch = 90;
  const CompiledModule module = compile_program(*system_nvrtc(), request);

  // The same text compiled straight through NVRTC for the virtual architecture only.
  const Nvrtc& nvrtc = *system_nvrtc();
  NvrtcProgram program = nullptr;
  ASSERT_EQ(nvrtc.create_program(&program, source.c_str(), "twice.cu", 0, nullptr, nullptr), kNvrtcSuccess);
  const char* options[] = {"--std=c++17", "-arch=compute_90"};
  ASSERT_EQ(nvrtc.compile_program(program, 2, options), kNvrtcSuccess);
  std::size_t size = 0;
  ASSERT_EQ(nvrtc.get_ptx_size(program, &size), kNvrtcSuccess);
  std::string ptx(size, '\0');
  ASSERT_EQ(nvrtc.get_ptx(program, ptx.data()), kNvrtcSuccess);
  nvrtc.destroy_program(&program);
  ptx.resize(ptx.find('\0') == std::string::npos ? ptx.size() : ptx.find('\0'));

  EXPECT_EQ(module.ptx, ptx);
}

TEST(Compile, PtxOnlyIsTheProgramsPtxWithoutAssembly) {
  CompileRequest request;
  request.source = testing::single_kernel_source("fst_twice", 2);
  request.name = "twice.cu";
  request.arch = 90;
  EXPECT_EQ(compile_to_ptx(*system_nvrtc(), request), compile_program(*system_nvrtc(), request).ptx);

  request.source = "extern \"C\" __global__ void bad(float* y) { y[0] = 2.0f }\n";
  try {
    compile_to_ptx(*system_nvrtc(), request);
    FAIL() << "expected kCompile";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kCompile);
    EXPECT_NE(std::string(error.what()).find("twice.cu"), std::string::npos) << error.what();
  }
  request.source.clear();
  try {
    compile_to_ptx(*system_nvrtc(), request);
    FAIL() << "expected kInvalidArgument";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  }
}

TEST(Compile, SyntaxErrorGivesCompileStatusWithTheLine) {
  CompileRequest request;
  request.name = "broken.cu";
  request.arch = 80;
  request.source =
      "extern \"C\" __global__ void ok(float* y) { y[0] = 1.0f; }\n"  // line 1
      "\n"                                                            // line 2
      "extern \"C\" __global__ void bad(float* y) {\n"                // line 3
      "  y[0] = 2.0f\n"                                               // line 4: no semicolon
      "}\n";
  try {
    compile_program(*system_nvrtc(), request);
    FAIL() << "expected kCompile";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kCompile);
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("NVRTC failed to compile broken.cu for sm_80:\n", 0), 0u) << message;
    EXPECT_TRUE(message.find("broken.cu(4)") != std::string::npos ||
                message.find("broken.cu(5)") != std::string::npos)
        << "the log names the line: " << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;
  }
}

TEST(Compile, OptionsAreTheDefaultsThenTheExtras) {
  CompileRequest request;
  request.arch = 86;
  request.options = {"-lineinfo", "--fmad=false"};
  const std::vector<std::string> expected = {"--std=c++17", "-arch=sm_86", "--ptxas-options=-v", "-lineinfo",
                                             "--fmad=false"};
  EXPECT_EQ(compile_options(request), expected);
  for (const std::string& option : compile_options(request)) {
    EXPECT_EQ(option.find("fast"), std::string::npos) << "no fast math by default: " << option;
  }
}

TEST(Compile, ExtraOptionsReachNvrtc) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(int* y) { y[0] = FST_ANSWER; }\n";
  request.arch = 80;
  request.options = {"-DFST_ANSWER=42"};
  const CompiledModule module = compile_program(*system_nvrtc(), request);
  EXPECT_NE(module.ptx.find("42"), std::string::npos) << module.ptx;
}

TEST(Compile, BadRequestsAreInvalidArguments) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() {}\n";
  request.arch = 0;
  try {
    compile_options(request);
    FAIL() << "arch 0 must be refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("arch 0"), std::string::npos) << error.what();
  }

  request.arch = 80;
  request.options = {"-arch=sm_70"};
  try {
    compile_options(request);
    FAIL() << "an extra -arch must be refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("'-arch=sm_70'"), std::string::npos) << error.what();
  }

  request.options.clear();
  request.source.clear();
  try {
    compile_program(*system_nvrtc(), request);
    FAIL() << "an empty source must be refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  }
}

TEST(Compile, AnUnknownOptionIsACompileError) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() {}\n";
  request.name = "opts.cu";
  request.options = {"--no-such-nvrtc-option"};
  try {
    compile_program(*system_nvrtc(), request);
    FAIL() << "expected kCompile";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kCompile);
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("NVRTC failed to compile opts.cu for sm_80 (NVRTC_ERROR_INVALID_OPTION):\n", 0),
              0u)
        << message;
  }
}

}  // namespace
}  // namespace fstitch::jit
