// One NVRTC compile of a generated CUDA C text into PTX and a CUBIN, without caching.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/nvrtc_loader.hpp"
#include "jit/resource_report.hpp"

namespace fstitch::jit {

struct CompileRequest {
  std::string source;                // the whole CUDA C text (docs/generated-code.md)
  std::string name;                  // program name, shown in the log; empty: "fstitch_kernels.cu"
  int arch = 80;                     // compute capability as major * 10 + minor: 80, 86, 90...
  std::vector<std::string> options;  // extra NVRTC options, appended after the defaults
};

struct CompiledModule {
  std::string ptx;                           // PTX for compute_<arch> (text, no trailing NUL)
  std::vector<uint8_t> cubin;                // ELF for sm_<arch>
  std::string log;                           // NVRTC's log, including the ptxas -v report
  std::vector<FunctionResources> resources;  // parse_ptxas_report(log)
};

// The program name NVRTC is given for `request`.
std::string program_name(const CompileRequest& request);

// The complete option list of a compile, in the order passed to NVRTC: --std=c++17,
// -arch=sm_<arch>, --ptxas-options=-v, then the request's extra options. Throws
// Error(kInvalidArgument) for an arch outside 10..9999 or an extra option that sets the
// architecture (the arch field does).
std::vector<std::string> compile_options(const CompileRequest& request);

// Compiles `request` with `nvrtc`. One -arch=sm_<arch> compile yields both the CUBIN and
// the PTX (NVRTC keeps the compute_<arch> PTX it generated on the way); should an NVRTC
// return no PTX from that compile, a second -arch=compute_<arch> compile provides it.
// Throws Error(kCompile) "NVRTC failed to compile <name> for sm_<arch>:\n<log>" when the
// source does not compile, Error(kOutOfMemory) when NVRTC runs out of memory.
CompiledModule compile_program(const Nvrtc& nvrtc, const CompileRequest& request);

// Compiles `request` to PTX for compute_<arch> only: NVRTC's front end without ptxas, about
// half the time of compile_program. Enough where only acceptance of the text matters; the
// same errors as compile_program for a source that does not compile.
std::string compile_to_ptx(const Nvrtc& nvrtc, const CompileRequest& request);

}  // namespace fstitch::jit
