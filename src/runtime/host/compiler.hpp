// The host C++ compiler: finding it at run time and building shared objects with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/host/host_options.hpp"

namespace fstitch::host {

struct HostCompiler {
  std::string path;      // absolute or as given in FSTITCH_HOST_CXX
  std::string identity;  // what `<path> --version` printed: part of cache keys
};

// FSTITCH_HOST_CXX when set (a program name looked up on PATH, or a path; no arguments),
// else the first of c++, g++, clang++ on PATH. Throws Error(kNoCompiler) when there is none
// or it does not run.
HostCompiler find_host_compiler();

// The flags every generated file is compiled with, then options.extra_flags.
std::vector<std::string> host_compile_flags(const HostCompileOptions& options);

// Compiles `source` into the shared object `output`, force-including `header`. Throws
// Error(kCompile, "<command> failed:\n<compiler output>") when the compiler fails, and
// Error(kNoCompiler) when it cannot be started.
void compile_shared_object(const HostCompiler& compiler, const std::vector<std::string>& flags,
                           const std::string& header, const std::string& source, const std::string& output);

// How many compiler processes this process has started (compiles and --version queries).
std::uint64_t host_compiler_process_count();

}  // namespace fstitch::host
