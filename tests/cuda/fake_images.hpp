// What the stand-in driver reads from an image given to cuLibraryLoadData: whether it is a
// CUBIN (ELF) or PTX text, and the kernels it defines. The driver gets no size with the
// image, so, like the real one, it trusts the ELF headers or the terminating NUL.
#pragma once

#include <set>
#include <string>

namespace fake_cuda {

struct ImageInfo {
  bool valid = false;  // an ELF with a symbol table, or text with a .version directive
  bool is_cubin = false;
  std::string ptx_target;         // ".target" of PTX text (first word), empty for a CUBIN
  std::set<std::string> entries;  // FUNC symbols of a CUBIN, .entry names of PTX
};

ImageInfo inspect_image(const void* image);

}  // namespace fake_cuda
