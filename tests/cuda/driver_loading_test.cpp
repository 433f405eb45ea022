// Settling the backend when the CUDA driver is missing or unusable: FST_BACKEND_CUDA fails
// with the status and the driver's words, FST_BACKEND_AUTO falls back to the host backend,
// says why, and still runs fusions correctly.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_test_support.hpp"

namespace fstitch::cuda_test {
namespace {

constexpr const char* kMissingDriver = "/nonexistent/libcuda.so.1";

// A context creation that must fail: the status, and the message, with the output untouched.
std::string expect_create_fails(const std::string& driver, const ContextRequest& request,
                                fst_status expected) {
  fst_context* const untouched = reinterpret_cast<fst_context*>(0x5a5a);
  fst_context* context = untouched;
  EXPECT_EQ(create_context(driver, request, &context), expected);
  EXPECT_EQ(context, untouched);
  return fst_last_error_message();
}

// Auto on `driver` runs on the host; the info log and fst_context_device_arch say why, with
// `reason` among the words.
void expect_auto_falls_back(const std::string& driver, const std::string& reason, int device = 0) {
  LogCapture log;
  ContextRequest request;
  request.backend = FST_BACKEND_AUTO;
  request.device = device;
  request.log = &log;
  fst_context* raw = nullptr;
  ASSERT_EQ(create_context(driver, request, &raw), FST_OK) << fst_last_error_message();
  ContextPtr context(raw);
  fst_backend active = FST_BACKEND_AUTO;
  ASSERT_EQ(fst_context_active_backend(context.get(), &active), FST_OK);
  EXPECT_EQ(active, FST_BACKEND_HOST);
  fst_backend requested = FST_BACKEND_CUDA;
  ASSERT_EQ(fst_context_backend(context.get(), &requested), FST_OK);
  EXPECT_EQ(requested, FST_BACKEND_AUTO);
  EXPECT_CONTAINS(log.text(), "chose host");
  EXPECT_CONTAINS(log.text(), reason);
  int sm = -1;
  EXPECT_EQ(fst_context_device_arch(context.get(), &sm), FST_ERROR_NO_DEVICE);
  EXPECT_EQ(sm, -1);
  EXPECT_CONTAINS(fst_last_error_message(), reason);
}

double relative_l2(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff / norm);
}

TEST(DriverLoading, MissingLibraryFailsCudaWithTheFileAndDlerror) {
  const std::string message = expect_create_fails(kMissingDriver, {}, FST_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(message, kMissingDriver);
  EXPECT_CONTAINS(message, "cannot open shared object file");
}

TEST(DriverLoading, MissingLibraryAutoRunsOnTheHostAndMatchesTheReference) {
  expect_auto_falls_back(kMissingDriver, kMissingDriver);

  ContextRequest request;
  request.backend = FST_BACKEND_AUTO;
  fst_context* raw = nullptr;
  ASSERT_EQ(create_context(kMissingDriver, request, &raw), FST_OK);
  ContextPtr context(raw);
  const int64_t rows = 4, cols = 32;
  GraphPtr graph = layer_norm_graph(context.get(), rows, cols);
  FusionPtr fusion = fuse(graph.get(), FST_POLICY_STITCH);
  ASSERT_TRUE(fusion);

  std::mt19937 random(20240611);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> x(rows * cols), gamma(cols), beta(cols);
  for (float& v : x) v = uniform(random);
  for (float& v : gamma) v = 1.0f + 0.25f * uniform(random);
  for (float& v : beta) v = 0.5f * uniform(random);
  std::vector<float> got(rows * cols, NAN), want(rows * cols, NAN);
  const void* inputs[3] = {x.data(), gamma.data(), beta.data()};
  void* got_out[1] = {got.data()};
  void* want_out[1] = {want.data()};
  ASSERT_EQ(fst_fusion_run(fusion.get(), inputs, 3, got_out, 1, nullptr, nullptr), FST_OK)
      << fst_last_error_message();
  ASSERT_EQ(fst_graph_evaluate_reference(graph.get(), inputs, 3, want_out, 1), FST_OK);
  EXPECT_LT(relative_l2(got, want), 1e-5);
}

TEST(DriverLoading, DriverWithoutAnEntryPointIsNamed) {
  const std::string message = expect_create_fails(FSTITCH_FAKE_CUDA_INCOMPLETE_PATH, {}, FST_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(message, "lacks cuGetErrorString");
  EXPECT_CONTAINS(message, FSTITCH_FAKE_CUDA_INCOMPLETE_PATH);
  expect_auto_falls_back(FSTITCH_FAKE_CUDA_INCOMPLETE_PATH, "lacks cuGetErrorString");
}

TEST(DriverLoading, StubLibraryIsNoDriver) {
  FakeCuda& fake = private_fake("stub");
  fake.set_init_result(34);  // CUDA_ERROR_STUB_LIBRARY
  const std::string message = expect_create_fails(fake.path(), {}, FST_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(message, "stub");
  expect_auto_falls_back(fake.path(), "stub");
}

TEST(DriverLoading, DriverWithoutGpuIsNoDevice) {
  FakeCuda& fake = private_fake("no_gpu");
  fake.set_init_result(100);  // CUDA_ERROR_NO_DEVICE
  const std::string message = expect_create_fails(fake.path(), {}, FST_ERROR_NO_DEVICE);
  EXPECT_CONTAINS(message, "CUDA_ERROR_NO_DEVICE");
  expect_auto_falls_back(fake.path(), "CUDA_ERROR_NO_DEVICE");
}

TEST(DriverLoading, FailedInitIsNoDriverWithTheDriversWords) {
  FakeCuda& fake = private_fake("init_fails");
  fake.set_init_result(999);  // CUDA_ERROR_UNKNOWN
  const std::string message = expect_create_fails(fake.path(), {}, FST_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(message, "cuInit");
  EXPECT_CONTAINS(message, "CUDA_ERROR_UNKNOWN (unknown error)");
  expect_auto_falls_back(fake.path(), "CUDA_ERROR_UNKNOWN");
}

TEST(DriverLoading, DriverOlderThanCuda12IsNoDriver) {
  FakeCuda& fake = private_fake("cuda_11_8");
  fake.set_driver_version(11080);
  const std::string message = expect_create_fails(fake.path(), {}, FST_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(message, "11.8");
  EXPECT_CONTAINS(message, "12.0");
  expect_auto_falls_back(fake.path(), "12.0");
}

class DeviceChecks : public CudaSeamTest {};

TEST_F(DeviceChecks, OrdinalBeyondTheDeviceCountIsNoDevice) {
  fake().set_device_count(2);
  ContextRequest request;
  request.device = 2;
  const std::string message = expect_create_fails(fake().path(), request, FST_ERROR_NO_DEVICE);
  EXPECT_CONTAINS(message, "device 2");
  EXPECT_CONTAINS(message, "2 device(s)");
  expect_auto_falls_back(fake().path(), "device 2", 2);

  // Device 1 of 2 exists.
  request.device = 1;
  fst_context* raw = nullptr;
  ASSERT_EQ(create_context(fake().path(), request, &raw), FST_OK) << fst_last_error_message();
  fst_context_destroy(raw);
}

TEST_F(DeviceChecks, NoDeviceAtAllIsNoDevice) {
  fake().set_device_count(0);
  const std::string message = expect_create_fails(fake().path(), {}, FST_ERROR_NO_DEVICE);
  EXPECT_CONTAINS(message, "no device");
  expect_auto_falls_back(fake().path(), "no device");
}

TEST_F(DeviceChecks, TuringDeviceIsNoDeviceNamingSm80) {
  fake().set_compute_capability(7, 5);
  const std::string message = expect_create_fails(fake().path(), {}, FST_ERROR_NO_DEVICE);
  EXPECT_CONTAINS(message, "sm_75");
  EXPECT_CONTAINS(message, "sm_80");
  expect_auto_falls_back(fake().path(), "sm_80");
}

}  // namespace
}  // namespace fstitch::cuda_test
