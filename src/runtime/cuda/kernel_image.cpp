#include "runtime/cuda/kernel_image.hpp"

#include <algorithm>

#include "jit/compile.hpp"
#include "support/error.hpp"

namespace fstitch::cuda {

const char* image_kind_name(ImageKind kind) {
  return kind == ImageKind::kCubin ? "cubin" : "ptx";
}

ImageKind choose_image(int device_cc, int target_sm) {
  if (device_cc < target_sm) {
    fail(StatusCode::kUnsupported, "the device is sm_" + std::to_string(device_cc) +
                                       ", older than the fusion's target sm_" + std::to_string(target_sm) +
                                       "; fuse with a target the device supports");
  }
  return device_cc / 10 == target_sm / 10 ? ImageKind::kCubin : ImageKind::kPtx;
}

namespace {

// The driver's words for a rejected image: its CUBIN does not fit this GPU.
bool rejects_binary(CUresult result) {
  return result == kErrorNoBinaryForGpu || result == kErrorInvalidImage ||
         result == kErrorUnsupportedPtxVersion;
}

}  // namespace

std::unique_ptr<LoadedKernel> LoadedKernel::load(std::shared_ptr<const Driver> driver,
                                                 const jit::CompiledModule& module, const std::string& name,
                                                 int device_cc, int target_sm, CUdevice device,
                                                 size_t dynamic_shared_bytes, int block_threads) {
  std::unique_ptr<LoadedKernel> loaded(new LoadedKernel());
  loaded->driver_ = driver;
  loaded->name_ = name;
  const DriverApi& api = driver->api();
  ImageKind kind = choose_image(device_cc, target_sm);
  CUresult result = -1;
  if (kind == ImageKind::kCubin) {
    result = api.cuLibraryLoadData(&loaded->library_, module.cubin.data(), nullptr, nullptr, 0, nullptr,
                                   nullptr, 0);
    if (rejects_binary(result)) kind = ImageKind::kPtx;
  }
  if (kind == ImageKind::kPtx) {
    // The PTX text must end in NUL: std::string::c_str() provides it.
    result = api.cuLibraryLoadData(&loaded->library_, module.ptx.c_str(), nullptr, nullptr, 0, nullptr,
                                   nullptr, 0);
  }
  if (result != kSuccess) {
    loaded->library_ = nullptr;
    fail(StatusCode::kLaunch, "cuLibraryLoadData failed for kernel " + name + " (" + image_kind_name(kind) +
                                  " for sm_" + std::to_string(target_sm) + " on an sm_" +
                                  std::to_string(device_cc) + " device): " + driver->describe(result));
  }
  loaded->image_ = kind;
  driver->check(api.cuLibraryGetKernel(&loaded->kernel_, loaded->library_, name.c_str()),
                "cuLibraryGetKernel");
  if (dynamic_shared_bytes > 0) {
    // Past 48 KiB a kernel must opt in to its dynamic shared memory, per device.
    driver->check(api.cuKernelSetAttribute(kFuncAttrMaxDynamicSharedSizeBytes,
                                           static_cast<int>(dynamic_shared_bytes), loaded->kernel_, device),
                  "cuKernelSetAttribute");
  }
  if (block_threads > 0) {
    // Once per loaded kernel: the occupancy depends only on the compiled code, the block size
    // and the dynamic shared memory, none of which changes between launches.
    int per_multiprocessor = 0;
    driver->check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, loaded->function(),
                                                                  block_threads, dynamic_shared_bytes),
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    loaded->blocks_per_multiprocessor_ = std::max(0, per_multiprocessor);
  }
  return loaded;
}

LoadedKernel::~LoadedKernel() {
  if (library_ != nullptr) driver_->api().cuLibraryUnload(library_);
}

CUfunction LoadedKernel::function() const {
  CUfunction function = nullptr;
  driver_->check(driver_->api().cuKernelGetFunction(&function, kernel_), "cuKernelGetFunction");
  return function;
}

}  // namespace fstitch::cuda
