// NVRTC, loaded with dlopen at the first compile so that the library loads and plans on
// machines without the CUDA toolkit. Only the few entry points fstitch calls are declared
// here; nvrtc.h is not needed to build.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace fstitch::jit {

// ABI-compatible stand-ins for the NVRTC types (nvrtcResult is a C enum, nvrtcProgram an
// opaque pointer).
using NvrtcResult = int;
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl*;

inline constexpr NvrtcResult kNvrtcSuccess = 0;
inline constexpr NvrtcResult kNvrtcErrorOutOfMemory = 1;
inline constexpr NvrtcResult kNvrtcErrorCompilation = 6;

// The resolved NVRTC entry points of one loaded library. Immutable and thread-safe:
// NVRTC allows concurrent calls on distinct programs.
class Nvrtc {
 public:
  using VersionFn = NvrtcResult (*)(int* major, int* minor);
  using CreateProgramFn = NvrtcResult (*)(NvrtcProgram* program, const char* source, const char* name,
                                          int header_count, const char* const* headers,
                                          const char* const* include_names);
  using CompileProgramFn = NvrtcResult (*)(NvrtcProgram program, int option_count,
                                           const char* const* options);
  using GetSizeFn = NvrtcResult (*)(NvrtcProgram program, std::size_t* size);
  using GetBytesFn = NvrtcResult (*)(NvrtcProgram program, char* out);
  using DestroyProgramFn = NvrtcResult (*)(NvrtcProgram* program);
  using GetErrorStringFn = const char* (*)(NvrtcResult result);

  Nvrtc(const Nvrtc&) = delete;
  Nvrtc& operator=(const Nvrtc&) = delete;
  ~Nvrtc();

  // The file that was loaded, as it was passed to dlopen.
  const std::string& library() const { return library_; }
  int version_major() const { return version_major_; }
  int version_minor() const { return version_minor_; }
  // "major.minor", e.g. "13.0".
  std::string version_string() const;
  // NVRTC's name for a result code, e.g. "NVRTC_ERROR_COMPILATION".
  std::string error_string(NvrtcResult result) const;

  CreateProgramFn create_program = nullptr;
  CompileProgramFn compile_program = nullptr;
  GetSizeFn get_program_log_size = nullptr;
  GetBytesFn get_program_log = nullptr;
  GetSizeFn get_ptx_size = nullptr;
  GetBytesFn get_ptx = nullptr;
  GetSizeFn get_cubin_size = nullptr;
  GetBytesFn get_cubin = nullptr;
  DestroyProgramFn destroy_program = nullptr;
  GetErrorStringFn get_error_string = nullptr;

 private:
  friend std::shared_ptr<const Nvrtc> load_nvrtc(const std::vector<std::string>& candidates);
  Nvrtc() = default;

  void* handle_ = nullptr;
  std::string library_;
  int version_major_ = 0;
  int version_minor_ = 0;
};

// Where NVRTC is looked for, in order: libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so
// through the dynamic linker's search path, then the same names under the lib64 folder of
// $FSTITCH_CUDA_HOME, $CUDA_HOME and /usr/local/cuda. Reads the environment on every call.
std::vector<std::string> default_nvrtc_candidates();

// Loads the first candidate that opens and exports every needed entry point. Throws
// Error(kNoCompiler) naming each candidate and why it failed when none does.
std::shared_ptr<const Nvrtc> load_nvrtc(const std::vector<std::string>& candidates);

// The process-wide NVRTC from default_nvrtc_candidates(), loaded once on first use
// (thread-safe). A failure is remembered too: later calls rethrow the same kNoCompiler
// error without searching again.
std::shared_ptr<const Nvrtc> system_nvrtc();

}  // namespace fstitch::jit
