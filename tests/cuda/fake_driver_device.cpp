// Entry points of the stand-in driver: error names, initialization, devices and contexts.
#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/fake_state.hpp"

using fake_cuda::Context;
using fake_cuda::CUresult;
using fake_cuda::Entry;
using fstitch::cuda::CUcontext;
using fstitch::cuda::CUdevice;

namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* description;
};

// The codes fstitch and these tests meet, with the real driver's names and descriptions.
constexpr ErrorText kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

bool valid_device(const fake_cuda::State& s, CUdevice device) {
  return device >= 0 && device < s.config.device_count;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  Entry call("cuGetErrorName", false);
  if (call.early) return call.early;
  if (name == nullptr) return fake_cuda::kInvalidValue;
  const ErrorText* e = find_error(error);
  *name = e ? e->name : nullptr;
  return e ? fake_cuda::kSuccess : fake_cuda::kInvalidValue;
}

FAKE_CUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  Entry call("cuGetErrorString", false);
  if (call.early) return call.early;
  if (text == nullptr) return fake_cuda::kInvalidValue;
  const ErrorText* e = find_error(error);
  *text = e ? e->description : nullptr;
  return e ? fake_cuda::kSuccess : fake_cuda::kInvalidValue;
}

FAKE_CUDA_EXPORT CUresult cuInit(unsigned flags) {
  Entry call("cuInit", false);
  if (call.early) return call.early;
  if (flags != 0) return fake_cuda::kInvalidValue;
  if (call.s.config.init_result != fake_cuda::kSuccess) return call.s.config.init_result;
  call.s.initialized = true;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDriverGetVersion(int* version) {
  Entry call("cuDriverGetVersion", false);
  if (call.early) return call.early;
  if (version == nullptr) return fake_cuda::kInvalidValue;
  *version = call.s.config.driver_version;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  Entry call("cuDeviceGetCount");
  if (call.early) return call.early;
  if (count == nullptr) return fake_cuda::kInvalidValue;
  *count = call.s.config.device_count;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  Entry call("cuDeviceGet");
  if (call.early) return call.early;
  if (device == nullptr) return fake_cuda::kInvalidValue;
  if (!valid_device(call.s, ordinal)) return fake_cuda::kInvalidDevice;
  *device = ordinal;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  Entry call("cuDeviceGetAttribute");
  if (call.early) return call.early;
  if (value == nullptr) return fake_cuda::kInvalidValue;
  if (!valid_device(call.s, device)) return fake_cuda::kInvalidDevice;
  const fake_cuda::Config& c = call.s.config;
  namespace cu = fstitch::cuda;
  switch (attribute) {
    case cu::kAttrMaxThreadsPerBlock:
      *value = c.max_threads_per_block;
      break;
    case cu::kAttrMultiprocessorCount:
      *value = c.multiprocessors;
      break;
    case cu::kAttrL2CacheSize:
      *value = c.l2_bytes;
      break;
    case cu::kAttrComputeCapabilityMajor:
      *value = c.cc_major;
      break;
    case cu::kAttrComputeCapabilityMinor:
      *value = c.cc_minor;
      break;
    case cu::kAttrCooperativeLaunch:
      *value = c.cooperative_launch ? 1 : 0;
      break;
    case cu::kAttrMemoryPoolsSupported:
      *value = c.memory_pools ? 1 : 0;
      break;
    case cu::kAttrMemoryClockRate:
      if (c.memory_clock_khz == 0) return fake_cuda::kInvalidValue;
      *value = c.memory_clock_khz;
      break;
    case cu::kAttrGlobalMemoryBusWidth:
      if (c.memory_bus_bits == 0) return fake_cuda::kInvalidValue;
      *value = c.memory_bus_bits;
      break;
    case cu::kAttrClockRate:
      *value = c.clock_khz;
      break;
    case cu::kAttrMaxThreadsPerMultiprocessor:
      *value = 2048;
      break;
    case cu::kAttrMaxSharedMemoryPerMultiprocessor:
      *value = 233472;
      break;
    case cu::kAttrMaxRegistersPerMultiprocessor:
      *value = 65536;
      break;
    case cu::kAttrMaxSharedMemoryPerBlockOptin:
      *value = 232448;
      break;
    case cu::kAttrMaxBlocksPerMultiprocessor:
      *value = 32;
      break;
    default:
      return fake_cuda::kInvalidValue;  // an attribute the stand-in does not simulate
  }
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  Entry call("cuDeviceGetName");
  if (call.early) return call.early;
  if (name == nullptr || length <= 0) return fake_cuda::kInvalidValue;
  if (!valid_device(call.s, device)) return fake_cuda::kInvalidDevice;
  const std::string text = "fstitch stand-in GPU sm_" + std::to_string(call.s.config.cc_major) +
                           std::to_string(call.s.config.cc_minor);
  const size_t n = std::min(text.size(), static_cast<size_t>(length) - 1);
  std::memcpy(name, text.data(), n);
  name[n] = '\0';
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  Entry call("cuDevicePrimaryCtxRetain");
  if (call.early) return call.early;
  if (context == nullptr) return fake_cuda::kInvalidValue;
  if (!valid_device(call.s, device)) return fake_cuda::kInvalidDevice;
  ++call.s.primary_retains[device];
  *context = reinterpret_cast<CUcontext>(call.s.primary(device));
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  Entry call("cuDevicePrimaryCtxRelease_v2");
  if (call.early) return call.early;
  if (!valid_device(call.s, device)) return fake_cuda::kInvalidDevice;
  int& retains = call.s.primary_retains[device];
  if (retains == 0) return fake_cuda::kInvalidContext;
  --retains;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxGetCurrent(CUcontext* context) {
  Entry call("cuCtxGetCurrent");
  if (call.early) return call.early;
  if (context == nullptr) return fake_cuda::kInvalidValue;
  *context = reinterpret_cast<CUcontext>(fake_cuda::current_context());
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxSetCurrent(CUcontext handle) {
  Entry call("cuCtxSetCurrent");
  if (call.early) return call.early;
  auto& stack = fake_cuda::context_stack();
  if (handle == nullptr) {  // as documented: pops the top, if any
    if (!stack.empty()) stack.pop_back();
    return fake_cuda::kSuccess;
  }
  Context* context = call.s.find_context(handle);
  if (!call.s.usable(context)) return fake_cuda::kInvalidContext;
  if (stack.empty()) {
    stack.push_back(context);
  } else {
    stack.back() = context;
  }
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext handle) {
  Entry call("cuCtxPushCurrent_v2");
  if (call.early) return call.early;
  if (handle == nullptr) return fake_cuda::kInvalidValue;
  Context* context = call.s.find_context(handle);
  if (!call.s.usable(context)) return fake_cuda::kInvalidContext;
  fake_cuda::context_stack().push_back(context);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* popped) {
  Entry call("cuCtxPopCurrent_v2");
  if (call.early) return call.early;
  auto& stack = fake_cuda::context_stack();
  if (stack.empty()) return fake_cuda::kInvalidContext;
  if (popped != nullptr) *popped = reinterpret_cast<CUcontext>(stack.back());
  stack.pop_back();
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  Entry call("cuCtxGetDevice");
  if (call.early) return call.early;
  if (device == nullptr) return fake_cuda::kInvalidValue;
  const Context* context = fake_cuda::usable_current_context(call.s);
  if (context == nullptr) return fake_cuda::kInvalidContext;
  *device = context->device;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuCtxSynchronize() {
  Entry call("cuCtxSynchronize");
  if (call.early) return call.early;
  if (fake_cuda::usable_current_context(call.s) == nullptr) return fake_cuda::kInvalidContext;
  return fake_cuda::kSuccess;  // the simulated device finishes every call when it is made
}
