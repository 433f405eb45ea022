// The host C++ compiler: finding it at run time and running it within a time limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/host/host_options.hpp"

namespace fstitch::host {

struct HostCompiler {
  std::string path;      // absolute or as given in FSTITCH_HOST_CXX
  std::string identity;  // what `<path> --version` printed: part of cache keys
};

// The flags every generated file is compiled with, then options.extra_flags.
std::vector<std::string> host_compile_flags(const HostCompileOptions& options);

inline constexpr std::chrono::seconds kDefaultCompileTimeout{600};
inline constexpr std::chrono::seconds kMaxCompileTimeout{7 * 24 * 3600};

// How long one compiler process may run, and where that limit was set (for messages).
struct CompileTimeout {
  std::chrono::milliseconds limit{kDefaultCompileTimeout};
  std::string origin = "the default limit";  // or "FSTITCH_HOST_COMPILE_TIMEOUT='30'", ...
};

// options.compile_timeout when set, else FSTITCH_HOST_COMPILE_TIMEOUT (seconds, fractions
// allowed), else kDefaultCompileTimeout. Throws Error(kInvalidArgument) naming the variable
// when it is not a number of seconds in (0, kMaxCompileTimeout], and for such an option.
CompileTimeout host_compile_timeout(const HostCompileOptions& options);

// FSTITCH_HOST_CXX when set (a program name looked up on PATH, or a path; no arguments),
// else the first of c++, g++, clang++ on PATH. Throws Error(kNoCompiler) when there is none
// or it does not run (`--version` fails, or runs past `timeout`).
HostCompiler find_host_compiler(const CompileTimeout& timeout);

// Runs the compiler with `arguments` (everything after the program) to build `output`.
// Throws Error(kCompile, "<command> failed:\n<compiler output>") when the compiler fails,
// Error(kCompile) naming the limit and FSTITCH_HOST_COMPILE_TIMEOUT when it runs past
// `timeout` (its process group is killed then), and Error(kNoCompiler) when it cannot be
// started.
void run_host_compiler(const HostCompiler& compiler, const std::vector<std::string>& arguments,
                       const std::string& output, const CompileTimeout& timeout);

// Compiles `source` into the shared object `output`, force-including `header`, with `flags`
// (host_compile_flags); errors as run_host_compiler's.
void compile_shared_object(const HostCompiler& compiler, const std::vector<std::string>& flags,
                           const std::string& header, const std::string& source, const std::string& output,
                           const CompileTimeout& timeout);

// How many compiler processes this process has started (compiles and --version queries).
std::uint64_t host_compiler_process_count();

}  // namespace fstitch::host
