#include "jit/cache_key.hpp"

// Inlined so that libfstitch needs no libxxhash at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdint>

#include "fstitch.h"

#define FSTITCH_JIT_STRINGIFY_(x) #x
#define FSTITCH_JIT_STRINGIFY(x) FSTITCH_JIT_STRINGIFY_(x)

namespace fstitch::jit {
namespace {

void append_field(std::string* buffer, const std::string& field) {
  uint64_t size = field.size();
  for (int byte = 0; byte < 8; ++byte) buffer->push_back(static_cast<char>((size >> (8 * byte)) & 0xffu));
  buffer->append(field);
}

}  // namespace

const char* library_version_string() {
  return FSTITCH_JIT_STRINGIFY(FST_VERSION_MAJOR) "." FSTITCH_JIT_STRINGIFY(
      FST_VERSION_MINOR) "." FSTITCH_JIT_STRINGIFY(FST_VERSION_PATCH);
}

std::string cache_key(const std::string& nvrtc_version, const CompileRequest& request) {
  const std::vector<std::string> options = compile_options(request);
  std::string buffer;
  buffer.reserve(request.source.size() + 256);
  append_field(&buffer, "fstitch-jit-key-v1");
  append_field(&buffer, library_version_string());
  append_field(&buffer, nvrtc_version);
  append_field(&buffer, std::to_string(request.arch));
  append_field(&buffer, program_name(request));
  append_field(&buffer, std::to_string(options.size()));
  for (const std::string& option : options) append_field(&buffer, option);
  append_field(&buffer, request.source);

  XXH128_canonical_t canonical;  // big-endian bytes: the hex reads as the hash's value
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(buffer.data(), buffer.size()));
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof(canonical.digest));
  for (unsigned char byte : canonical.digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xfu]);
  }
  return hex;
}

}  // namespace fstitch::jit
