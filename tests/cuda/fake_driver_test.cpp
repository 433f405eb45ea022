// The stand-in driver behaves like the real one where the other tests rely on it: error
// names, initialization, the per-thread context stack, memory, and kernel lookup.
#include <cstring>
#include <thread>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

using cuda::CUdeviceptr;
using cuda::CUkernel;
using cuda::CUlibrary;

class FakeDriver : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    ASSERT_EQ(fake().entry<CUresult(unsigned)>("cuInit")(0), 0);
  }
};

TEST_F(FakeDriver, KnowsTheErrorNamesAndRefusesUnknownCodes) {
  auto name_of = fake().entry<CUresult(CUresult, const char**)>("cuGetErrorName");
  auto text_of = fake().entry<CUresult(CUresult, const char**)>("cuGetErrorString");
  const char* name = nullptr;
  const char* text = nullptr;
  ASSERT_EQ(name_of(719, &name), 0);
  ASSERT_EQ(text_of(719, &text), 0);
  EXPECT_STREQ(name, "CUDA_ERROR_LAUNCH_FAILED");
  EXPECT_STREQ(text, "unspecified launch failure");
  for (CUresult code : {0, 1, 2, 3, 34, 35, 100, 101, 200, 201, 209, 222, 700, 719, 720, 801, 999}) {
    EXPECT_EQ(name_of(code, &name), 0) << code;
    EXPECT_EQ(text_of(code, &text), 0) << code;
  }
  name = "unchanged";
  EXPECT_EQ(name_of(12345, &name), 1);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(text_of(-1, &text), 1);
}

TEST(FakeDriverInit, CallsBeforeASuccessfulCuInitFail) {
  // A copy never initialized before, also when the test is repeated.
  static int repetition = 0;
  FakeCuda& fake = private_fake("init_order_" + std::to_string(repetition++));
  auto device_count = fake.entry<CUresult(int*)>("cuDeviceGetCount");
  auto init = fake.entry<CUresult(unsigned)>("cuInit");
  int count = -1;
  EXPECT_EQ(device_count(&count), 3);  // CUDA_ERROR_NOT_INITIALIZED
  fake.set_init_result(100);
  EXPECT_EQ(init(0), 100);
  EXPECT_EQ(device_count(&count), 3);
  fake.set_init_result(0);
  EXPECT_EQ(init(0), 0);
  EXPECT_EQ(device_count(&count), 0);
  EXPECT_EQ(count, 1);
}

TEST_F(FakeDriver, ContextStackIsPerThreadAndFollowsTheDriversRules) {
  auto push = fake().entry<CUresult(CUcontext)>("cuCtxPushCurrent_v2");
  auto pop = fake().entry<CUresult(CUcontext*)>("cuCtxPopCurrent_v2");
  auto retain = fake().entry<CUresult(CUcontext*, int)>("cuDevicePrimaryCtxRetain");
  auto release = fake().entry<CUresult(int)>("cuDevicePrimaryCtxRelease_v2");
  auto a = static_cast<CUcontext>(fake().new_context(0));
  auto b = static_cast<CUcontext>(fake().new_context(0));

  CUcontext popped = nullptr;
  EXPECT_EQ(pop(&popped), 201);             // nothing to pop
  ASSERT_EQ(fake().cuCtxSetCurrent(a), 0);  // an empty stack gets a
  ASSERT_EQ(push(b), 0);
  EXPECT_EQ(fake().current_context(), b);
  std::thread([&] { EXPECT_EQ(fake().current_context(), nullptr); }).join();
  ASSERT_EQ(fake().cuCtxSetCurrent(a), 0);  // replaces the top
  EXPECT_EQ(fake().context_stack_depth(), 2);
  ASSERT_EQ(pop(&popped), 0);
  EXPECT_EQ(popped, a);
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);  // pops
  EXPECT_EQ(fake().context_stack_depth(), 0);

  // A primary context is usable only while retained.
  void* primary_handle = fake().primary_context(0);
  auto primary = static_cast<CUcontext>(primary_handle);
  const int retains = fake().primary_retain_count(0);
  if (retains == 0) {
    EXPECT_EQ(push(primary), 201);
  }
  CUcontext retained = nullptr;
  ASSERT_EQ(retain(&retained, 0), 0);
  EXPECT_EQ(retained, primary);
  ASSERT_EQ(push(primary), 0);
  ASSERT_EQ(pop(nullptr), 0);
  ASSERT_EQ(release(0), 0);
  EXPECT_EQ(fake().primary_retain_count(0), retains);
}

TEST_F(FakeDriver, MemoryIsHostMemoryWithTheDriversChecks) {
  auto alloc = fake().entry<CUresult(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto free_memory = fake().entry<CUresult(CUdeviceptr)>("cuMemFree_v2");
  auto to_device = fake().entry<CUresult(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  auto to_host = fake().entry<CUresult(void*, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2");
  CUdeviceptr memory = 0;
  EXPECT_EQ(alloc(&memory, 64), 201);  // no current context
  ASSERT_EQ(fake().cuCtxSetCurrent(static_cast<CUcontext>(fake().new_context(0))), 0);
  ASSERT_EQ(alloc(&memory, 64), 0);
  const char text[] = "device bytes";
  char back[sizeof text] = {};
  ASSERT_EQ(to_device(memory + 8, text, sizeof text), 0);
  ASSERT_EQ(to_host(back, memory + 8, sizeof text), 0);
  EXPECT_STREQ(back, text);
  EXPECT_EQ(to_device(memory + 60, text, sizeof text), 1);  // beyond the allocation
  ASSERT_EQ(free_memory(memory), 0);
  EXPECT_EQ(free_memory(memory), 1);  // freed twice
  EXPECT_EQ(fake().live_allocation_count(), 0u);
  ASSERT_EQ(fake().cuCtxSetCurrent(nullptr), 0);
}

TEST_F(FakeDriver, LibrariesFindOnlyTheKernelsTheyDefine) {
  auto load =
      fake().entry<CUresult(CUlibrary*, const void*, void*, void**, unsigned, void*, void**, unsigned)>(
          "cuLibraryLoadData");
  auto get = fake().entry<CUresult(CUkernel*, CUlibrary, const char*)>("cuLibraryGetKernel");
  auto unload = fake().entry<CUresult(CUlibrary)>("cuLibraryUnload");
  const char* ptx =
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry present(\n)\n{\nret;\n}\n";
  CUlibrary library = nullptr;
  ASSERT_EQ(load(&library, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0), 0);
  CUkernel kernel = nullptr;
  EXPECT_EQ(get(&kernel, library, "present"), 0);
  EXPECT_EQ(get(&kernel, library, "absent"), 500);  // CUDA_ERROR_NOT_FOUND
  EXPECT_EQ(load(&library, "not an image", nullptr, nullptr, 0, nullptr, nullptr, 0), 218);
  const unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2};
  fake().set_reject_cubin(1);
  CUlibrary refused = nullptr;
  EXPECT_EQ(load(&refused, elf, nullptr, nullptr, 0, nullptr, nullptr, 0), 209);
  const auto libraries = fake().libraries();
  ASSERT_EQ(libraries.size(), 1u);
  EXPECT_STREQ(libraries[0].ptx_target, "sm_80");
  EXPECT_EQ(libraries[0].asked_count, 2);
  ASSERT_EQ(unload(library), 0);
  EXPECT_EQ(unload(library), 400);  // CUDA_ERROR_INVALID_HANDLE
}

}  // namespace
}  // namespace fstitch::cuda_test
