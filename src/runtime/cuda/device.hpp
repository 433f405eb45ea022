// A CUDA device as fstitch sees it, and the CUDA context a run executes in: the caller's
// current context when it has one, else the device's primary context (retained once).
#pragma once

#include "plan/arch.hpp"

#include <memory>
#include <mutex>
#include <string>

#include "runtime/cuda/driver.hpp"

namespace fstitch::cuda {

struct DeviceInfo {
  int ordinal = 0;
  CUdevice handle = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int l2_bytes = 0;
  bool cooperative_launch = false;
  bool memory_pools = false;  // cuMemAllocAsync works
  // What the cost model reads of the device (name, SMs and L2 included); 0 where the driver
  // does not say.
  DeviceFacts facts;
  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

// Throws Error(kNoDevice) when `ordinal` names no device, naming how many there are.
DeviceInfo query_device(const Driver& driver, int ordinal);

// One device of one driver, as a fstitch context uses it. Thread-safe.
class Device {
 public:
  Device(std::shared_ptr<const Driver> driver, DeviceInfo info);
  ~Device();  // releases the primary context if it was retained
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Driver& driver() const { return *driver_; }
  const std::shared_ptr<const Driver>& driver_ptr() const { return driver_; }
  const DriverApi& api() const { return driver_->api(); }
  const DeviceInfo& info() const { return info_; }
  // The device's primary context, retained on first use.
  CUcontext primary_context();

 private:
  std::shared_ptr<const Driver> driver_;
  DeviceInfo info_;
  std::mutex mutex_;
  CUcontext primary_ = nullptr;
};

// Makes a context current on this thread for the scope of a run: the thread's current
// context when there is one (a framework's; Error(kInvalidArgument) when it belongs to
// another device), else the device's primary context, pushed and popped again at the end
// of the scope.
class ContextScope {
 public:
  explicit ContextScope(Device& device);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  CUcontext context() const { return context_; }
  bool pushed() const { return pushed_; }

 private:
  const Driver& driver_;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

}  // namespace fstitch::cuda
