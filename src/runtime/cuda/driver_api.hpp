// The CUDA driver API as fstitch uses it: ABI-compatible stand-ins for the few driver types
// and constants it needs, and the table of entry points resolved from libcuda.so.1 with
// dlsym. cuda.h is not needed to build, and nothing links the driver: the library loads
// and plans on machines without CUDA (docs/cuda-backend.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fstitch::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUlib_st;
using CUlibrary = CUlib_st*;
struct CUkern_st;
using CUkernel = CUkern_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;

inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorOutOfMemory = 2;
inline constexpr CUresult kErrorStubLibrary = 34;
inline constexpr CUresult kErrorInsufficientDriver = 35;
inline constexpr CUresult kErrorNoDevice = 100;
inline constexpr CUresult kErrorInvalidDevice = 101;
inline constexpr CUresult kErrorInvalidImage = 200;
inline constexpr CUresult kErrorNoBinaryForGpu = 209;
inline constexpr CUresult kErrorUnsupportedPtxVersion = 222;
inline constexpr CUresult kErrorCooperativeLaunchTooLarge = 720;
inline constexpr CUresult kErrorNotSupported = 801;

// CUdevice_attribute values.
inline constexpr int kAttrMaxThreadsPerBlock = 1;
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrL2CacheSize = 38;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrCooperativeLaunch = 95;
inline constexpr int kAttrMemoryPoolsSupported = 115;
// What the cost model reads of a device (plan/arch.hpp DeviceFacts); a driver that does not
// report one of them leaves it unknown.
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: the opt-in past 48 KiB per block.
inline constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
inline constexpr int kAttrClockRate = 13;
inline constexpr int kAttrMemoryClockRate = 36;
inline constexpr int kAttrGlobalMemoryBusWidth = 37;
inline constexpr int kAttrMaxThreadsPerMultiprocessor = 39;
inline constexpr int kAttrMaxSharedMemoryPerMultiprocessor = 81;
inline constexpr int kAttrMaxRegistersPerMultiprocessor = 82;
inline constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
inline constexpr int kAttrMaxBlocksPerMultiprocessor = 106;

// CUfunction_attribute values.
inline constexpr int kFuncAttrNumRegs = 4;

// The oldest driver fstitch runs on: context-independent loading (cuLibrary*) and launching
// a CUkernel directly came with CUDA 12.0.
inline constexpr int kMinimumDriverVersion = 12000;

// cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute), with the one
// attribute fstitch sets: CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION.
inline constexpr int kLaunchAttrClusterDimension = 4;
union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned x, y, z;
  } cluster_dim;
  void* align;  // the driver's union holds pointers: 8-byte aligned
};
struct CUlaunchAttribute {
  int id = 0;
  char pad[8 - sizeof(int)] = {};
  CUlaunchAttributeValue value{};
};
struct CUlaunchConfig {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  CUlaunchAttribute* attrs = nullptr;
  unsigned attr_count = 0;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute must match the driver's layout");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig must match the driver's layout");

// The resolved entry points of one loaded driver library. Immutable after loading; the
// driver itself is thread-safe.
struct DriverApi {
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice*) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuLibraryLoadData)(CUlibrary*, const void*, void*, void**, unsigned, void*, void**,
                                unsigned) = nullptr;
  CUresult (*cuLibraryUnload)(CUlibrary) = nullptr;
  CUresult (*cuLibraryGetKernel)(CUkernel*, CUlibrary, const char*) = nullptr;
  CUresult (*cuKernelGetFunction)(CUfunction*, CUkernel) = nullptr;
  CUresult (*cuKernelSetAttribute)(int, int, CUkernel, CUdevice) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**) = nullptr;
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, CUstream, void**) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
};

}  // namespace fstitch::cuda
