// The workspace of one run when the caller gives none: allocated in stream order with
// cuMemAllocAsync and freed the same way after the run's launches, so a run neither waits
// for the device nor stops a CUDA graph capture. On devices without memory pools it falls
// back to cuMemAlloc and frees after synchronizing the stream.
#pragma once

#include <cstddef>

#include "runtime/cuda/device.hpp"

namespace fstitch::cuda {

class StreamWorkspace {
 public:
  StreamWorkspace(const Device& device, size_t bytes, CUstream stream);
  ~StreamWorkspace();  // frees in stream order (errors are ignored: nothing can report them)
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;

  CUdeviceptr address() const { return address_; }
  bool stream_ordered() const { return stream_ordered_; }

 private:
  const Device& device_;
  CUstream stream_;
  CUdeviceptr address_ = 0;
  bool stream_ordered_ = true;
};

}  // namespace fstitch::cuda
