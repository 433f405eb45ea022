// Loading the CUDA driver: dlopen of libcuda.so.1 (never linked), the entry points fstitch
// uses, cuInit and a version check, and the driver's own words in every error.
#pragma once

#include <memory>
#include <string>

#include "runtime/cuda/driver_api.hpp"

namespace fstitch::cuda {

class Driver {
 public:
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const DriverApi& api() const { return api_; }
  // The file that was loaded, as it was passed to dlopen.
  const std::string& library() const { return library_; }
  // cuDriverGetVersion: 1000 * major + 10 * minor, e.g. 13000.
  int version() const { return version_; }

  // "CUDA_ERROR_NAME (the driver's description)", or the number when the driver has no name.
  std::string describe(CUresult result) const;
  // Throws for a failed driver call: Error(kOutOfMemory) for CUDA_ERROR_OUT_OF_MEMORY,
  // Error(kNoDevice) for no or an invalid device, else Error(kLaunch), each as
  // "<call> failed: CUDA_ERROR_NAME (description)".
  void check(CUresult result, const char* call) const;

 private:
  friend std::shared_ptr<const Driver> load_driver(const std::string& path);
  Driver() = default;
  DriverApi api_;
  std::string library_;
  int version_ = 0;
};

// $FSTITCH_CUDA_DRIVER when set (another driver library, or a test's stand-in), else
// "libcuda.so.1" through the dynamic linker's search path.
std::string default_driver_path();

// Loads the driver library at `path`, resolves its entry points, calls cuInit(0) and checks
// the version. Throws Error(kNoDriver) when the library does not open, lacks an entry point,
// is the toolkit's stub, or is older than CUDA 12.0; Error(kNoDevice) when cuInit finds no
// GPU. A loaded driver is kept for the life of the process (never dlclosed) and shared by
// later calls with the same path. Thread-safe.
std::shared_ptr<const Driver> load_driver(const std::string& path);

}  // namespace fstitch::cuda
