#include "jit/nvrtc_loader.hpp"

#include <dlfcn.h>

#include <iterator>
#include <utility>

#include "support/env.hpp"
#include "support/error.hpp"

namespace fstitch::jit {
namespace {

const char* const kLibraryNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

// Resolves one symbol into a typed function pointer; records the name when it is missing.
template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* out, std::string* missing) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
    return false;
  }
  *out = reinterpret_cast<Fn>(address);
  return true;
}

std::string last_dlerror() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

}  // namespace

// NVRTC stays loaded for the life of the process: unloading a library with its own C++
// runtime and thread-local state is unsafe, and a reload would cost its initialization again.
Nvrtc::~Nvrtc() = default;

std::string Nvrtc::version_string() const {
  return std::to_string(version_major_) + "." + std::to_string(version_minor_);
}

std::string Nvrtc::error_string(NvrtcResult result) const {
  const char* text = get_error_string != nullptr ? get_error_string(result) : nullptr;
  return text != nullptr ? text : "NVRTC error " + std::to_string(result);
}

std::vector<std::string> default_nvrtc_candidates() {
  std::vector<std::string> candidates(std::begin(kLibraryNames), std::end(kLibraryNames));
  std::vector<std::string> homes;
  if (auto home = env_string("FSTITCH_CUDA_HOME")) homes.push_back(*home);
  if (auto home = env_string("CUDA_HOME")) homes.push_back(*home);
  homes.emplace_back("/usr/local/cuda");
  for (const std::string& home : homes) {
    for (const char* name : kLibraryNames) candidates.push_back(home + "/lib64/" + name);
  }
  return candidates;
}

std::shared_ptr<const Nvrtc> load_nvrtc(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    if (!tried.empty()) tried += "; ";
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      tried += candidate + " (" + last_dlerror() + ")";
      continue;
    }
    std::shared_ptr<Nvrtc> nvrtc(new Nvrtc());
    nvrtc->handle_ = handle;  // closed by the destructor from here on
    nvrtc->library_ = candidate;
    Nvrtc::VersionFn version = nullptr;
    std::string missing;
    resolve(handle, "nvrtcVersion", &version, &missing);
    resolve(handle, "nvrtcCreateProgram", &nvrtc->create_program, &missing);
    resolve(handle, "nvrtcCompileProgram", &nvrtc->compile_program, &missing);
    resolve(handle, "nvrtcGetProgramLogSize", &nvrtc->get_program_log_size, &missing);
    resolve(handle, "nvrtcGetProgramLog", &nvrtc->get_program_log, &missing);
    resolve(handle, "nvrtcGetPTXSize", &nvrtc->get_ptx_size, &missing);
    resolve(handle, "nvrtcGetPTX", &nvrtc->get_ptx, &missing);
    resolve(handle, "nvrtcGetCUBINSize", &nvrtc->get_cubin_size, &missing);
    resolve(handle, "nvrtcGetCUBIN", &nvrtc->get_cubin, &missing);
    resolve(handle, "nvrtcDestroyProgram", &nvrtc->destroy_program, &missing);
    resolve(handle, "nvrtcGetErrorString", &nvrtc->get_error_string, &missing);
    if (!missing.empty()) {
      tried += candidate + " (loaded, but lacks " + missing + ")";
      continue;
    }
    const NvrtcResult result = version(&nvrtc->version_major_, &nvrtc->version_minor_);
    if (result != kNvrtcSuccess) {
      tried += candidate + " (nvrtcVersion failed: " + nvrtc->error_string(result) + ")";
      continue;
    }
    return nvrtc;
  }
  if (tried.empty()) tried = "no candidate libraries";
  fail(StatusCode::kNoCompiler,
       "NVRTC not found: tried " + tried + "; install the CUDA toolkit's NVRTC or set FSTITCH_CUDA_HOME");
}

std::shared_ptr<const Nvrtc> system_nvrtc() {
  struct Outcome {
    std::shared_ptr<const Nvrtc> nvrtc;
    std::string error;
  };
  // A function-local static is initialized once even with concurrent callers. It is
  // never destroyed, so kernels compiled during static destruction still find NVRTC.
  static const Outcome* const outcome = [] {
    auto* result = new Outcome();
    try {
      result->nvrtc = load_nvrtc(default_nvrtc_candidates());
    } catch (const Error& error) {
      result->error = error.what();
    }
    return result;
  }();
  if (!outcome->nvrtc) fail(StatusCode::kNoCompiler, outcome->error);
  return outcome->nvrtc;
}

}  // namespace fstitch::jit
