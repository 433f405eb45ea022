// A driver library that lacks most entry points: fstitch must refuse it with
// FST_ERROR_NO_DRIVER naming the first entry point it misses (cuGetErrorString).
#include "runtime/cuda/driver_api.hpp"

using fstitch::cuda::CUresult;

extern "C" __attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  return flags == 0 ? 0 : 1;
}

extern "C" __attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return 1;
  *name = error == 0 ? "CUDA_SUCCESS" : nullptr;
  return error == 0 ? 0 : 1;
}
