// One generated kernel loaded into the driver: its NVRTC output (CUBIN, or PTX for the
// driver to compile when the device is newer than the target) as a context-independent
// CUlibrary, so one load serves every CUDA context of the process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/cuda/driver.hpp"

namespace fstitch::jit {
struct CompiledModule;
}

namespace fstitch::cuda {

enum class ImageKind : uint8_t { kCubin, kPtx };
const char* image_kind_name(ImageKind kind);

// Which image runs on a device of compute capability `device_cc` (10 * major + minor) for
// code compiled for sm_<target_sm>: the CUBIN when its machine code runs there (same major
// version, device minor at least the target's), else the PTX, which the driver compiles for
// newer devices. Throws Error(kUnsupported) for a device older than the target.
ImageKind choose_image(int device_cc, int target_sm);

class LoadedKernel {
 public:
  // Loads `name` from `module` with the image choose_image() picks, falling back to the PTX
  // when the driver rejects the CUBIN as not for this GPU. Throws Error(kLaunch) with the
  // driver's error (and its JIT log) when neither image loads. A kernel with dynamic shared
  // memory is opted in to `dynamic_shared_bytes` on `device` (needed past 48 KiB). When
  // `block_threads` > 0, asks the occupancy calculator once how many blocks of that size
  // (with the dynamic shared memory) the compiled kernel keeps resident per multiprocessor
  // (blocks_per_multiprocessor()); that needs a current context of `device`.
  static std::unique_ptr<LoadedKernel> load(std::shared_ptr<const Driver> driver,
                                            const jit::CompiledModule& module, const std::string& name,
                                            int device_cc, int target_sm, CUdevice device,
                                            size_t dynamic_shared_bytes = 0, int block_threads = 0);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  const std::string& name() const { return name_; }
  ImageKind image() const { return image_; }
  // The context-independent handle; cuLaunchKernel takes it in place of a CUfunction.
  CUkernel kernel() const { return kernel_; }
  // The kernel's CUfunction in the calling thread's current context.
  CUfunction function() const;
  // Blocks of the launch's size resident per multiprocessor, as the driver's occupancy
  // calculator reported at load time for the compiled kernel (its real registers and shared
  // memory); nullopt when it was loaded without a block size. 0: one block does not fit.
  std::optional<int> blocks_per_multiprocessor() const { return blocks_per_multiprocessor_; }

 private:
  LoadedKernel() = default;
  std::shared_ptr<const Driver> driver_;
  std::string name_;
  ImageKind image_ = ImageKind::kCubin;
  CUlibrary library_ = nullptr;
  CUkernel kernel_ = nullptr;
  std::optional<int> blocks_per_multiprocessor_;
};

}  // namespace fstitch::cuda
