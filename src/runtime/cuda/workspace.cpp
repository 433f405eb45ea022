#include "runtime/cuda/workspace.hpp"

namespace fstitch::cuda {

StreamWorkspace::StreamWorkspace(const Device& device, size_t bytes, CUstream stream)
    : device_(device), stream_(stream), stream_ordered_(device.info().memory_pools) {
  if (bytes == 0) return;
  if (stream_ordered_) {
    device.driver().check(device.api().cuMemAllocAsync(&address_, bytes, stream), "cuMemAllocAsync");
  } else {
    device.driver().check(device.api().cuMemAlloc(&address_, bytes), "cuMemAlloc");
  }
}

StreamWorkspace::~StreamWorkspace() {
  if (address_ == 0) return;
  const DriverApi& api = device_.api();
  if (stream_ordered_) {
    api.cuMemFreeAsync(address_, stream_);
  } else {
    api.cuStreamSynchronize(stream_);
    api.cuMemFree(address_);
  }
}

}  // namespace fstitch::cuda
