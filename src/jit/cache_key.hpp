// The key that names a compiled module in the kernel caches.
#pragma once

#include <string>

#include "jit/compile.hpp"

namespace fstitch::jit {

// fstitch's version as text, "major.minor.patch" from fstitch.h.
const char* library_version_string();

// XXH3-128 over the library version, the NVRTC version, the target arch, the program
// name, the complete option list (compile_options) and the source, as 32 lowercase hex
// digits. The program name is included because NVRTC mangles it into the names of
// internal-linkage functions in the PTX and CUBIN. Each field is length-prefixed, so no
// two different inputs serialize alike. Throws what compile_options throws.
std::string cache_key(const std::string& nvrtc_version, const CompileRequest& request);

}  // namespace fstitch::jit
