// Launch configurations and cooperative launches: a grid-barrier kernel launches only when
// every block of its grid can be resident at once, asked of the occupancy calculator first.
#include <string>

#include "cuda/cuda_test_support.hpp"
#include "jit/compile.hpp"
#include "runtime/cuda/kernel_image.hpp"
#include "runtime/cuda/launch.hpp"
#include "support/error.hpp"

namespace fstitch::cuda_test {
namespace {

cuda::DeviceInfo device_info(int multiprocessors, bool cooperative) {
  cuda::DeviceInfo d;
  d.name = "test device";
  d.cc_major = 9;
  d.multiprocessors = multiprocessors;
  d.max_threads_per_block = 1024;
  d.cooperative_launch = cooperative;
  return d;
}

PlannedKernel planned_kernel(int64_t grid, int block, LaunchKind kind) {
  PlannedKernel k;
  k.name = "fst_k7";
  k.spec.grid_blocks = grid;
  k.spec.block_threads = block;
  k.launch = kind;
  return k;
}

cuda::LaunchConfig cooperative_grid(unsigned x, unsigned y, unsigned z) {
  cuda::LaunchConfig c;
  c.grid[0] = x;
  c.grid[1] = y;
  c.grid[2] = z;
  c.block[0] = 256;
  c.kind = LaunchKind::kCooperative;
  return c;
}

// Runs `body`, which must throw Error with `code`; returns its message.
template <class Body>
std::string expect_error(StatusCode code, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

TEST(LaunchConfig, CopiesTheScheduleAndTheLaunchKind) {
  const cuda::LaunchConfig c =
      cuda::launch_config(planned_kernel(300, 1024, LaunchKind::kCooperative), device_info(132, true));
  EXPECT_EQ(c.grid[0], 300u);
  EXPECT_EQ(c.grid[1], 1u);
  EXPECT_EQ(c.grid[2], 1u);
  EXPECT_EQ(c.block[0], 1024u);
  EXPECT_EQ(c.block[1], 1u);
  EXPECT_EQ(c.block[2], 1u);
  EXPECT_EQ(c.dynamic_shared_bytes, 0u);
  EXPECT_EQ(c.kind, LaunchKind::kCooperative);
  EXPECT_EQ(cuda::launch_config(planned_kernel(1, 32, LaunchKind::kRegular), device_info(132, true)).kind,
            LaunchKind::kRegular);
}

TEST(LaunchConfig, BlockLargerThanTheDeviceAllowsIsUnsupported) {
  const std::string message = expect_error(StatusCode::kUnsupported, [] {
    cuda::launch_config(planned_kernel(4, 2048, LaunchKind::kRegular), device_info(132, true));
  });
  EXPECT_CONTAINS(message, "fst_k7");
  EXPECT_CONTAINS(message, "2048");
  EXPECT_CONTAINS(message, "1024");
  expect_error(StatusCode::kUnsupported, [] {
    cuda::launch_config(planned_kernel(4, 0, LaunchKind::kRegular), device_info(132, true));
  });
}

TEST(LaunchConfig, GridBeyondCudasLimitIsUnsupported) {
  const std::string message = expect_error(StatusCode::kUnsupported, [] {
    cuda::launch_config(planned_kernel(int64_t{1} << 31, 256, LaunchKind::kRegular), device_info(132, true));
  });
  EXPECT_CONTAINS(message, "2147483648");
  cuda::launch_config(planned_kernel((int64_t{1} << 31) - 1, 256, LaunchKind::kRegular),
                      device_info(132, true));
}

TEST(CooperativeFit, FitsExactlyWhenEveryBlockIsResident) {
  cuda::require_cooperative_fit(cooperative_grid(4 * 132, 1, 1), device_info(132, true), 4, "fst_k7");
  cuda::require_cooperative_fit(cooperative_grid(8, 8, 8), device_info(128, true), 4, "fst_k7");
}

TEST(CooperativeFit, OneBlockTooManyFailsWithTheNumbers) {
  const std::string message = expect_error(StatusCode::kLaunch, [] {
    cuda::require_cooperative_fit(cooperative_grid(4 * 132 + 1, 1, 1), device_info(132, true), 4, "fst_k7");
  });
  EXPECT_CONTAINS(message, "fst_k7");
  EXPECT_CONTAINS(message, "529");
  EXPECT_CONTAINS(message, "528");
  EXPECT_CONTAINS(message, "4 per multiprocessor x 132");
  // All three grid dimensions count.
  expect_error(StatusCode::kLaunch, [] {
    cuda::require_cooperative_fit(cooperative_grid(8, 8, 9), device_info(128, true), 4, "fst_k7");
  });
}

TEST(CooperativeFit, DeviceWithoutCooperativeLaunchIsUnsupported) {
  const std::string message = expect_error(StatusCode::kUnsupported, [] {
    cuda::require_cooperative_fit(cooperative_grid(1, 1, 1), device_info(132, false), 4, "fst_k7");
  });
  EXPECT_CONTAINS(message, "fst_k7");
  EXPECT_CONTAINS(message, "cooperative");
}

// A kernel that does nothing, as PTX for sm_80, for launches through the driver.
constexpr const char* kGridKernelPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry grid_kernel(
	.param .u64 grid_kernel_param_0
)
{
	ret;
}
)";

class CooperativeLaunch : public CudaSeamTest {
 protected:
  void SetUp() override {
    CudaSeamTest::SetUp();
    fake().set_multiprocessors(10);
    fake().set_max_active_blocks(3);
    driver_ = cuda::load_driver(fake().path());
    device_ = std::make_unique<cuda::Device>(driver_, cuda::query_device(*driver_, 0));
    jit::CompiledModule module;
    module.ptx = kGridKernelPtx;
    // An sm_80 module on the sm_90 device: loaded from its PTX (it has no CUBIN).
    kernel_ = cuda::LoadedKernel::load(driver_, module, "grid_kernel", 90, 80, device_->info().handle);
    ASSERT_EQ(kernel_->image(), cuda::ImageKind::kPtx);
    fake().set_param_count("grid_kernel", 1);
  }
  void TearDown() override {
    kernel_.reset();
    device_.reset();
    EXPECT_EQ(fake().primary_retain_count(0), 0);
    CudaSeamTest::TearDown();
  }
  void launch(const cuda::LaunchConfig& config) {
    cuda::ContextScope scope(*device_);
    void* params[1] = {&argument_};
    cuda::launch_kernel(*device_, *kernel_, config, nullptr, params);
  }
  std::shared_ptr<const cuda::Driver> driver_;
  std::unique_ptr<cuda::Device> device_;
  std::unique_ptr<cuda::LoadedKernel> kernel_;
  void* argument_ = reinterpret_cast<void*>(0x1234500);
};

TEST_F(CooperativeLaunch, LaunchesCooperativelyAfterAnOccupancyQuery) {
  launch(cooperative_grid(30, 1, 1));  // 3 per multiprocessor x 10
  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].cooperative, 1);
  EXPECT_STREQ(launches[0].kernel, "grid_kernel");
  EXPECT_EQ(launches[0].grid[0], 30u);
  EXPECT_EQ(launches[0].block[0], 256u);
  EXPECT_EQ(launches[0].params[0], argument_);
  EXPECT_EQ(launches[0].context, fake().primary_context(0));
  const size_t query = fake().find_call("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  ASSERT_NE(query, SIZE_MAX);
  EXPECT_LT(query, launches[0].call_index);
  EXPECT_EQ(fake().call_count("cuLaunchKernel"), 0u);
}

TEST_F(CooperativeLaunch, TooLargeAGridIsNotLaunched) {
  const std::string message = expect_error(StatusCode::kLaunch, [&] { launch(cooperative_grid(31, 1, 1)); });
  EXPECT_CONTAINS(message, "grid_kernel");
  EXPECT_CONTAINS(message, "31");
  EXPECT_CONTAINS(message, "30");
  EXPECT_EQ(fake().launches().size(), 0u);
  EXPECT_EQ(fake().call_count("cuLaunchCooperativeKernel"), 0u);
}

TEST_F(CooperativeLaunch, DeviceWithoutCooperativeLaunchIsUnsupported) {
  fake().set_cooperative_launch(0);
  device_ = std::make_unique<cuda::Device>(driver_, cuda::query_device(*driver_, 0));
  expect_error(StatusCode::kUnsupported, [&] { launch(cooperative_grid(1, 1, 1)); });
  EXPECT_EQ(fake().launches().size(), 0u);
}

TEST_F(CooperativeLaunch, RegularConfigLaunchesTheKernelHandle) {
  cuda::LaunchConfig config = cooperative_grid(1000, 1, 1);
  config.kind = LaunchKind::kRegular;
  launch(config);
  const auto launches = fake().launches();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].cooperative, 0);
  EXPECT_EQ(launches[0].function, static_cast<void*>(kernel_->kernel()));
  EXPECT_EQ(fake().call_count("cuOccupancyMaxActiveBlocksPerMultiprocessor"), 0u);
}

}  // namespace
}  // namespace fstitch::cuda_test
