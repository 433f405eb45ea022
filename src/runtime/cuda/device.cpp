#include "runtime/cuda/device.hpp"

#include "support/error.hpp"

namespace fstitch::cuda {

DeviceInfo query_device(const Driver& driver, int ordinal) {
  const DriverApi& api = driver.api();
  int count = 0;
  driver.check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) fail(StatusCode::kNoDevice, "the CUDA driver reports no device");
  if (ordinal < 0 || ordinal >= count) {
    fail(StatusCode::kNoDevice, "device " + std::to_string(ordinal) + " does not exist; the driver reports " +
                                    std::to_string(count) + " device(s)");
  }
  DeviceInfo info;
  info.ordinal = ordinal;
  driver.check(api.cuDeviceGet(&info.handle, ordinal), "cuDeviceGet");
  char name[256] = {};
  driver.check(api.cuDeviceGetName(name, sizeof name - 1, info.handle), "cuDeviceGetName");
  info.name = name;
  auto attribute = [&](int which) {
    int value = 0;
    driver.check(api.cuDeviceGetAttribute(&value, which, info.handle), "cuDeviceGetAttribute");
    return value;
  };
  info.cc_major = attribute(kAttrComputeCapabilityMajor);
  info.cc_minor = attribute(kAttrComputeCapabilityMinor);
  info.multiprocessors = attribute(kAttrMultiprocessorCount);
  info.max_threads_per_block = attribute(kAttrMaxThreadsPerBlock);
  info.l2_bytes = attribute(kAttrL2CacheSize);
  info.cooperative_launch = attribute(kAttrCooperativeLaunch) != 0;
  info.memory_pools = attribute(kAttrMemoryPoolsSupported) != 0;
  // Facts for the cost model: a driver that does not report one leaves it unknown (0).
  auto optional_attribute = [&](int which) {
    int value = 0;
    return api.cuDeviceGetAttribute(&value, which, info.handle) == kSuccess && value > 0 ? value : 0;
  };
  DeviceFacts& f = info.facts;
  f.compute_capability = info.compute_capability();
  f.name = info.name;
  f.sm_count = info.multiprocessors;
  f.l2_bytes = info.l2_bytes;
  f.clock_khz = optional_attribute(kAttrClockRate);
  f.memory_clock_khz = optional_attribute(kAttrMemoryClockRate);
  f.memory_bus_bits = optional_attribute(kAttrGlobalMemoryBusWidth);
  f.max_threads_per_sm = optional_attribute(kAttrMaxThreadsPerMultiprocessor);
  f.shared_bytes_per_sm = optional_attribute(kAttrMaxSharedMemoryPerMultiprocessor);
  f.registers_per_sm = optional_attribute(kAttrMaxRegistersPerMultiprocessor);
  f.max_shared_bytes_per_block = optional_attribute(kAttrMaxSharedMemoryPerBlockOptin);
  f.max_blocks_per_sm = optional_attribute(kAttrMaxBlocksPerMultiprocessor);
  return info;
}

Device::Device(std::shared_ptr<const Driver> driver, DeviceInfo info)
    : driver_(std::move(driver)), info_(std::move(info)) {}

Device::~Device() {
  if (primary_ != nullptr) api().cuDevicePrimaryCtxRelease(info_.handle);
}

CUcontext Device::primary_context() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (primary_ == nullptr) {
    CUcontext context = nullptr;
    driver_->check(api().cuDevicePrimaryCtxRetain(&context, info_.handle), "cuDevicePrimaryCtxRetain");
    primary_ = context;
  }
  return primary_;
}

ContextScope::ContextScope(Device& device) : driver_(device.driver()) {
  const DriverApi& api = device.api();
  driver_.check(api.cuCtxGetCurrent(&context_), "cuCtxGetCurrent");
  if (context_ != nullptr) {
    // Kernels were planned and are loaded for the context's device: another device's
    // context would run them on a GPU they were not chosen for.
    CUdevice current = 0;
    driver_.check(api.cuCtxGetDevice(&current), "cuCtxGetDevice");
    if (current != device.info().handle) {
      fail(StatusCode::kInvalidArgument,
           "the calling thread's current CUDA context belongs to another device than this fstitch context's "
           "device " +
               std::to_string(device.info().ordinal) +
               "; make a context of that device current, or create the fstitch context for the other device");
    }
    return;
  }
  context_ = device.primary_context();
  driver_.check(api.cuCtxPushCurrent(context_), "cuCtxPushCurrent");
  pushed_ = true;
}

ContextScope::~ContextScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  driver_.api().cuCtxPopCurrent(&popped);
}

}  // namespace fstitch::cuda
