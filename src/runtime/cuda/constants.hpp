// A fusion's tensor constants on the GPU: one device copy per CUDA context, uploaded the first
// time a run needs them in that context and freed with the fusion. Device memory belongs to a
// context, while the kernels (cuLibraryLoadData) are context-independent, hence one copy per
// context a fusion runs in.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/cuda/device.hpp"

namespace fstitch::cuda {

struct HostConstant {
  const void* data;  // owned by the fusion's graph, alive as long as this object
  size_t bytes;
};

class DeviceConstants {
 public:
  explicit DeviceConstants(std::vector<HostConstant> host) : host_(std::move(host)) {}
  ~DeviceConstants();  // frees every copy in its context; errors are ignored (nothing can report them)
  DeviceConstants(const DeviceConstants&) = delete;
  DeviceConstants& operator=(const DeviceConstants&) = delete;

  // The device address of each constant in `context` (current on this thread, as inside a
  // ContextScope), in index order. The first call in a context allocates (cuMemAlloc) and
  // copies synchronously (cuMemcpyHtoD), so that run waits for the copies and must not be
  // captured into a CUDA graph; later calls only look the copy up. Throws Error from the driver
  // (kOutOfMemory, kLaunch) and keeps nothing of a failed upload. Thread-safe.
  std::vector<const void*> in_context(const Device& device, CUcontext context);

 private:
  struct Copy {
    CUcontext context;
    std::vector<CUdeviceptr> addresses;
  };
  static void free_copy(const Driver& driver, const Copy& copy);

  std::vector<HostConstant> host_;
  std::mutex mutex_;
  std::shared_ptr<const Driver> driver_;  // kept for the destructor
  std::vector<Copy> copies_;
};

}  // namespace fstitch::cuda
