#include "jit/compile.hpp"

#include <utility>

#include "support/error.hpp"

namespace fstitch::jit {
namespace {

// Destroys the NVRTC program on every path out of a compile.
class ProgramGuard {
 public:
  explicit ProgramGuard(const Nvrtc& nvrtc) : nvrtc_(nvrtc) {}
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;
  ~ProgramGuard() {
    if (program_ != nullptr) nvrtc_.destroy_program(&program_);
  }
  NvrtcProgram* address() { return &program_; }
  NvrtcProgram get() const { return program_; }

 private:
  const Nvrtc& nvrtc_;
  NvrtcProgram program_ = nullptr;
};

std::string arch_name(const char* prefix, int arch) {
  return prefix + std::to_string(arch);
}

[[noreturn]] void fail_nvrtc(const Nvrtc& nvrtc, NvrtcResult result, const std::string& what) {
  const StatusCode code = result == kNvrtcErrorOutOfMemory ? StatusCode::kOutOfMemory : StatusCode::kCompile;
  fail(code, what + ": " + nvrtc.error_string(result));
}

// Reads a NVRTC output (log, PTX or CUBIN) of a compiled program.
template <typename Bytes>
Bytes read_output(const Nvrtc& nvrtc, NvrtcProgram program, Nvrtc::GetSizeFn get_size, Nvrtc::GetBytesFn get,
                  const char* what) {
  std::size_t size = 0;
  NvrtcResult result = get_size(program, &size);
  if (result != kNvrtcSuccess) {
    fail_nvrtc(nvrtc, result, std::string("NVRTC could not report the ") + what + " size");
  }
  Bytes bytes(size, 0);
  if (size == 0) return bytes;
  result = get(program, reinterpret_cast<char*>(bytes.data()));
  if (result != kNvrtcSuccess) fail_nvrtc(nvrtc, result, std::string("NVRTC could not return the ") + what);
  return bytes;
}

// Text outputs carry a terminating NUL in their reported size.
void strip_trailing_nuls(std::string* text) {
  while (!text->empty() && text->back() == '\0') text->pop_back();
}

struct ProgramOutput {
  std::string log;
  std::string ptx;
  std::vector<uint8_t> cubin;
};

ProgramOutput run_nvrtc(const Nvrtc& nvrtc, const CompileRequest& request,
                        const std::vector<std::string>& options, bool want_cubin) {
  const std::string name = program_name(request);
  ProgramGuard program(nvrtc);
  NvrtcResult result =
      nvrtc.create_program(program.address(), request.source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (result != kNvrtcSuccess) fail_nvrtc(nvrtc, result, "NVRTC could not create the program " + name);

  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  const NvrtcResult compiled =
      nvrtc.compile_program(program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());

  ProgramOutput output;
  output.log = read_output<std::string>(nvrtc, program.get(), nvrtc.get_program_log_size,
                                        nvrtc.get_program_log, "log");
  strip_trailing_nuls(&output.log);
  if (compiled != kNvrtcSuccess) {
    std::string message = "NVRTC failed to compile " + name + " for " + arch_name("sm_", request.arch);
    if (compiled != kNvrtcErrorCompilation) message += " (" + nvrtc.error_string(compiled) + ")";
    message += ":\n" + (output.log.empty() ? std::string("(empty log)") : output.log);
    fail(compiled == kNvrtcErrorOutOfMemory ? StatusCode::kOutOfMemory : StatusCode::kCompile, message);
  }
  output.ptx = read_output<std::string>(nvrtc, program.get(), nvrtc.get_ptx_size, nvrtc.get_ptx, "PTX");
  strip_trailing_nuls(&output.ptx);
  if (want_cubin) {
    output.cubin = read_output<std::vector<uint8_t>>(nvrtc, program.get(), nvrtc.get_cubin_size,
                                                     nvrtc.get_cubin, "CUBIN");
  }
  return output;
}

bool sets_architecture(const std::string& option) {
  for (const char* prefix : {"-arch", "--gpu-architecture", "--gpu-name"}) {
    if (option.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string program_name(const CompileRequest& request) {
  return request.name.empty() ? std::string("fstitch_kernels.cu") : request.name;
}

std::vector<std::string> compile_options(const CompileRequest& request) {
  if (request.arch < 10 || request.arch > 9999) {
    fail(StatusCode::kInvalidArgument,
         "target arch " + std::to_string(request.arch) +
             " is not a compute capability written as major * 10 + minor (e.g. 80, 90)");
  }
  std::vector<std::string> options = {"--std=c++17", "-arch=" + arch_name("sm_", request.arch),
                                      "--ptxas-options=-v"};
  for (const std::string& option : request.options) {
    if (sets_architecture(option)) {
      fail(StatusCode::kInvalidArgument,
           "extra option '" + option + "' sets the architecture; set CompileRequest::arch instead");
    }
    options.push_back(option);
  }
  return options;
}

CompiledModule compile_program(const Nvrtc& nvrtc, const CompileRequest& request) {
  if (request.source.empty()) {
    fail(StatusCode::kInvalidArgument, "the CUDA source of " + program_name(request) + " is empty");
  }
  const std::vector<std::string> options = compile_options(request);
  ProgramOutput output = run_nvrtc(nvrtc, request, options, /*want_cubin=*/true);
  if (output.cubin.empty()) {
    fail(StatusCode::kCompile, "NVRTC returned no CUBIN for " + program_name(request) + " for " +
                                   arch_name("sm_", request.arch) + ":\n" + output.log);
  }
  if (output.ptx.empty()) output.ptx = compile_to_ptx(nvrtc, request);
  CompiledModule module;
  module.ptx = std::move(output.ptx);
  module.cubin = std::move(output.cubin);
  module.log = std::move(output.log);
  module.resources = parse_ptxas_report(module.log);
  return module;
}

std::string compile_to_ptx(const Nvrtc& nvrtc, const CompileRequest& request) {
  if (request.source.empty()) {
    fail(StatusCode::kInvalidArgument, "the CUDA source of " + program_name(request) + " is empty");
  }
  std::vector<std::string> options = compile_options(request);
  options[1] = "-arch=" + arch_name("compute_", request.arch);
  options.erase(options.begin() + 2);  // nothing is assembled: drop --ptxas-options
  std::string ptx = run_nvrtc(nvrtc, request, options, /*want_cubin=*/false).ptx;
  if (ptx.empty()) {
    fail(StatusCode::kCompile, "NVRTC returned no PTX for " + program_name(request) + " for " +
                                   arch_name("compute_", request.arch));
  }
  return ptx;
}

}  // namespace fstitch::jit
