#include "cuda/fake_images.hpp"

#include <elf.h>

#include <cstring>
#include <sstream>

namespace fake_cuda {
namespace {

bool is_elf(const unsigned char* bytes) {
  return bytes[0] == ELFMAG0 && bytes[1] == ELFMAG1 && bytes[2] == ELFMAG2 && bytes[3] == ELFMAG3;
}

// The names of the function symbols in a 64-bit ELF image.
ImageInfo inspect_cubin(const unsigned char* bytes) {
  ImageInfo info;
  info.is_cubin = true;
  if (bytes[EI_CLASS] != ELFCLASS64) return info;
  Elf64_Ehdr header;
  std::memcpy(&header, bytes, sizeof header);
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff == 0) return info;
  auto section = [&](size_t index) {
    Elf64_Shdr s;
    std::memcpy(&s, bytes + header.e_shoff + index * sizeof(Elf64_Shdr), sizeof s);
    return s;
  };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symbols = section(i);
    if (symbols.sh_type != SHT_SYMTAB || symbols.sh_link >= header.e_shnum) continue;
    const Elf64_Shdr names = section(symbols.sh_link);
    for (size_t offset = 0; offset + sizeof(Elf64_Sym) <= symbols.sh_size; offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, bytes + symbols.sh_offset + offset, sizeof symbol);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_name >= names.sh_size) continue;
      const char* name = reinterpret_cast<const char*>(bytes + names.sh_offset + symbol.st_name);
      info.entries.insert(std::string(name, strnlen(name, names.sh_size - symbol.st_name)));
    }
    info.valid = true;
  }
  return info;
}

// ".target sm_80" and ".visible .entry name(" lines of PTX text.
ImageInfo inspect_ptx(const char* text) {
  ImageInfo info;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word == ".version") info.valid = true;
      if (word == ".target" && info.ptx_target.empty()) {
        words >> info.ptx_target;
        if (!info.ptx_target.empty() && info.ptx_target.back() == ',') info.ptx_target.pop_back();
      }
      if (word == ".entry") {
        std::string name;
        words >> name;
        info.entries.insert(name.substr(0, name.find('(')));
      }
    }
  }
  return info;
}

}  // namespace

ImageInfo inspect_image(const void* image) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (is_elf(bytes)) return inspect_cubin(bytes);
  return inspect_ptx(static_cast<const char*>(image));
}

}  // namespace fake_cuda
