#include "runtime/cuda/driver.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "support/env.hpp"
#include "support/error.hpp"

namespace fstitch::cuda {
namespace {

// Resolves `name` (the first of the names that the library exports) into `slot`.
template <class Fn>
bool resolve(void* handle, Fn* slot, std::initializer_list<const char*> names, std::string* missing) {
  for (const char* name : names) {
    if (void* symbol = dlsym(handle, name)) {
      *slot = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  *missing = *names.begin();
  return false;
}

bool resolve_all(void* handle, DriverApi* api, std::string* missing) {
  return resolve(handle, &api->cuGetErrorName, {"cuGetErrorName"}, missing) &&
         resolve(handle, &api->cuGetErrorString, {"cuGetErrorString"}, missing) &&
         resolve(handle, &api->cuInit, {"cuInit"}, missing) &&
         resolve(handle, &api->cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
         resolve(handle, &api->cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
         resolve(handle, &api->cuDeviceGet, {"cuDeviceGet"}, missing) &&
         resolve(handle, &api->cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
         resolve(handle, &api->cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
         resolve(handle, &api->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
         resolve(handle, &api->cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"}, missing) &&
         resolve(handle, &api->cuCtxGetCurrent, {"cuCtxGetCurrent"}, missing) &&
         resolve(handle, &api->cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
         resolve(handle, &api->cuCtxPushCurrent, {"cuCtxPushCurrent_v2"}, missing) &&
         resolve(handle, &api->cuCtxPopCurrent, {"cuCtxPopCurrent_v2"}, missing) &&
         resolve(handle, &api->cuCtxGetDevice, {"cuCtxGetDevice"}, missing) &&
         resolve(handle, &api->cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
         resolve(handle, &api->cuLibraryLoadData, {"cuLibraryLoadData"}, missing) &&
         resolve(handle, &api->cuLibraryUnload, {"cuLibraryUnload"}, missing) &&
         resolve(handle, &api->cuLibraryGetKernel, {"cuLibraryGetKernel"}, missing) &&
         resolve(handle, &api->cuKernelGetFunction, {"cuKernelGetFunction"}, missing) &&
         resolve(handle, &api->cuKernelSetAttribute, {"cuKernelSetAttribute"}, missing) &&
         resolve(handle, &api->cuFuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
         resolve(handle, &api->cuOccupancyMaxActiveBlocksPerMultiprocessor,
                 {"cuOccupancyMaxActiveBlocksPerMultiprocessor"}, missing) &&
         resolve(handle, &api->cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
         resolve(handle, &api->cuLaunchCooperativeKernel, {"cuLaunchCooperativeKernel"}, missing) &&
         resolve(handle, &api->cuLaunchKernelEx, {"cuLaunchKernelEx"}, missing) &&
         resolve(handle, &api->cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
         resolve(handle, &api->cuMemFree, {"cuMemFree_v2"}, missing) &&
         resolve(handle, &api->cuMemAllocAsync, {"cuMemAllocAsync"}, missing) &&
         resolve(handle, &api->cuMemFreeAsync, {"cuMemFreeAsync"}, missing) &&
         resolve(handle, &api->cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
         resolve(handle, &api->cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
         resolve(handle, &api->cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
         resolve(handle, &api->cuMemsetD8Async, {"cuMemsetD8Async"}, missing) &&
         resolve(handle, &api->cuStreamCreate, {"cuStreamCreate"}, missing) &&
         resolve(handle, &api->cuStreamDestroy, {"cuStreamDestroy_v2"}, missing) &&
         resolve(handle, &api->cuStreamSynchronize, {"cuStreamSynchronize"}, missing) &&
         resolve(handle, &api->cuEventCreate, {"cuEventCreate"}, missing) &&
         resolve(handle, &api->cuEventDestroy, {"cuEventDestroy_v2"}, missing) &&
         resolve(handle, &api->cuEventRecord, {"cuEventRecord"}, missing) &&
         resolve(handle, &api->cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
         resolve(handle, &api->cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.cuGetErrorName(result, &name) != kSuccess || name == nullptr) {
    return "CUDA error " + std::to_string(result);
  }
  std::string out = name;
  if (api_.cuGetErrorString(result, &text) == kSuccess && text != nullptr)
    out += std::string(" (") + text + ")";
  return out;
}

void Driver::check(CUresult result, const char* call) const {
  if (result == kSuccess) return;
  StatusCode code = StatusCode::kLaunch;
  if (result == kErrorOutOfMemory) code = StatusCode::kOutOfMemory;
  if (result == kErrorNoDevice || result == kErrorInvalidDevice) code = StatusCode::kNoDevice;
  fail(code, std::string(call) + " failed: " + describe(result));
}

std::string default_driver_path() {
  if (auto path = env_string("FSTITCH_CUDA_DRIVER")) return *path;
  return "libcuda.so.1";
}

std::shared_ptr<const Driver> load_driver(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Driver>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = loaded.find(path);
  if (found != loaded.end()) return found->second;

  if (path.empty())
    fail(StatusCode::kNoDriver, "no CUDA driver library named (FSTITCH_CUDA_DRIVER is empty)");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    fail(StatusCode::kNoDriver,
         "no CUDA driver: " + (why ? std::string(why) : "dlopen(" + path + ") failed"));
  }
  std::shared_ptr<Driver> driver(new Driver());
  driver->library_ = path;
  std::string missing;
  if (!resolve_all(handle, &driver->api_, &missing)) {
    dlclose(handle);
    fail(StatusCode::kNoDriver,
         "the CUDA driver " + path + " lacks " + missing + "; fstitch needs a driver for CUDA 12.0 or newer");
  }
  // The handle stays open for the life of the process: modules, streams and callbacks of
  // the driver may outlive every fstitch object.
  const DriverApi& api = driver->api_;
  const CUresult init = api.cuInit(0);
  if (init == kErrorStubLibrary) {
    fail(StatusCode::kNoDriver, "the CUDA driver " + path +
                                    " is the toolkit's stub library (CUDA_ERROR_STUB_LIBRARY): no NVIDIA "
                                    "driver is installed");
  }
  if (init == kErrorNoDevice)
    fail(StatusCode::kNoDevice, "cuInit found no CUDA device: " + driver->describe(init));
  if (init != kSuccess) fail(StatusCode::kNoDriver, "cuInit failed: " + driver->describe(init));
  driver->check(api.cuDriverGetVersion(&driver->version_), "cuDriverGetVersion");
  if (driver->version_ < kMinimumDriverVersion) {
    fail(StatusCode::kNoDriver,
         "the CUDA driver supports CUDA " + version_text(driver->version_) + "; fstitch needs 12.0 or newer");
  }
  loaded.emplace(path, driver);
  return driver;
}

}  // namespace fstitch::cuda
