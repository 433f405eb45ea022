#include "runtime/cuda/constants.hpp"

namespace fstitch::cuda {

void DeviceConstants::free_copy(const Driver& driver, const Copy& copy) {
  const DriverApi& api = driver.api();
  // cuMemFree needs the allocating context current; a context destroyed since freed it all.
  if (api.cuCtxPushCurrent(copy.context) != kSuccess) return;
  for (CUdeviceptr address : copy.addresses) {
    if (address != 0) api.cuMemFree(address);
  }
  CUcontext popped = nullptr;
  api.cuCtxPopCurrent(&popped);
}

DeviceConstants::~DeviceConstants() {
  if (!driver_) return;
  for (const Copy& copy : copies_) free_copy(*driver_, copy);
}

std::vector<const void*> DeviceConstants::in_context(const Device& device, CUcontext context) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto addresses_of = [](const Copy& copy) {
    std::vector<const void*> out;
    for (CUdeviceptr address : copy.addresses) out.push_back(reinterpret_cast<const void*>(address));
    return out;
  };
  for (const Copy& copy : copies_) {
    if (copy.context == context) return addresses_of(copy);
  }
  if (!driver_) driver_ = device.driver_ptr();
  const DriverApi& api = device.api();
  Copy copy{context, std::vector<CUdeviceptr>(host_.size(), 0)};
  try {
    for (size_t i = 0; i < host_.size(); ++i) {
      device.driver().check(api.cuMemAlloc(&copy.addresses[i], host_[i].bytes), "cuMemAlloc");
      device.driver().check(api.cuMemcpyHtoD(copy.addresses[i], host_[i].data, host_[i].bytes),
                            "cuMemcpyHtoD");
    }
  } catch (...) {
    for (CUdeviceptr address : copy.addresses) {
      if (address != 0) api.cuMemFree(address);  // the context is current here
    }
    throw;
  }
  copies_.push_back(copy);
  return addresses_of(copies_.back());
}

}  // namespace fstitch::cuda
