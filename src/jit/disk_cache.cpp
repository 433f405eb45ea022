#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
// Inlined so that libfstitch needs no libxxhash at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace fstitch::jit {
namespace {

constexpr char kMagic[8] = {'F', 'S', 'T', 'K', 'C', 'A', 'C', 'H'};
constexpr std::size_t kKeySize = 32;
// Larger files are not entries this library writes; refusing them bounds the read.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

void put_u32(std::string* out, uint32_t value) {
  for (int byte = 0; byte < 4; ++byte) out->push_back(static_cast<char>((value >> (8 * byte)) & 0xffu));
}
void put_u64(std::string* out, uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) out->push_back(static_cast<char>((value >> (8 * byte)) & 0xffu));
}
uint64_t get_le(std::string_view bytes, std::size_t offset, int width) {
  uint64_t value = 0;
  for (int byte = width - 1; byte >= 0; --byte) {
    value = (value << 8) | static_cast<unsigned char>(bytes[offset + static_cast<std::size_t>(byte)]);
  }
  return value;
}

std::string errno_text(int error) {
  return std::strerror(error);
}

// Writes all of `bytes`, retrying short writes and interruptions.
bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t written = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(written);
  }
  return true;
}

// Reads the whole file; false with errno set on failure.
bool read_all(int fd, std::string* out) {
  struct stat info;
  if (::fstat(fd, &info) != 0) return false;
  if (info.st_size < 0 || static_cast<uint64_t>(info.st_size) > kMaxEntryBytes) {
    errno = EFBIG;
    return false;
  }
  out->assign(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t done = 0;
  while (done < out->size()) {
    const ssize_t got = ::read(fd, out->data() + done, out->size() - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (got == 0) break;  // shorter than fstat said: the checks below reject it
    done += static_cast<std::size_t>(got);
  }
  out->resize(done);
  return true;
}

}  // namespace

std::string encode_cache_entry(const std::string& key, const CompiledModule& module) {
  std::string payload;
  payload.reserve(module.ptx.size() + module.cubin.size() + module.log.size());
  payload.append(module.ptx);
  payload.append(reinterpret_cast<const char*>(module.cubin.data()), module.cubin.size());
  payload.append(module.log);

  std::string entry;
  entry.reserve(kCacheHeaderSize + payload.size());
  entry.append(kMagic, sizeof(kMagic));
  put_u32(&entry, kCacheFormatVersion);
  put_u32(&entry, static_cast<uint32_t>(kCacheHeaderSize));
  std::string padded_key = key.substr(0, kKeySize);
  padded_key.resize(kKeySize, '\0');
  entry.append(padded_key);
  put_u64(&entry, module.ptx.size());
  put_u64(&entry, module.cubin.size());
  put_u64(&entry, module.log.size());
  put_u64(&entry, XXH3_64bits(payload.data(), payload.size()));
  entry.append(payload);
  return entry;
}

std::optional<CompiledModule> decode_cache_entry(std::string_view bytes, const std::string& key,
                                                 std::string* problem) {
  auto reject = [&](const std::string& why) -> std::optional<CompiledModule> {
    *problem = why;
    return std::nullopt;
  };
  if (bytes.size() < kCacheHeaderSize) {
    return reject("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                  std::to_string(kCacheHeaderSize) + "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return reject("bad magic");
  const uint64_t version = get_le(bytes, 8, 4);
  if (version != kCacheFormatVersion) {
    return reject("format version " + std::to_string(version) + ", expected " +
                  std::to_string(kCacheFormatVersion));
  }
  if (get_le(bytes, 12, 4) != kCacheHeaderSize) return reject("bad header size");
  if (key.size() != kKeySize || bytes.substr(16, kKeySize) != key) return reject("written for another key");
  const uint64_t ptx_size = get_le(bytes, 48, 8);
  const uint64_t cubin_size = get_le(bytes, 56, 8);
  const uint64_t log_size = get_le(bytes, 64, 8);
  const uint64_t payload_size = bytes.size() - kCacheHeaderSize;
  // Compared one at a time so that huge lengths cannot overflow the sum.
  if (ptx_size > payload_size || cubin_size > payload_size - ptx_size ||
      log_size != payload_size - ptx_size - cubin_size) {
    return reject("section lengths " + std::to_string(ptx_size) + " + " + std::to_string(cubin_size) + " + " +
                  std::to_string(log_size) + " do not match the " + std::to_string(payload_size) +
                  "-byte payload (truncated?)");
  }
  const std::string_view payload = bytes.substr(kCacheHeaderSize);
  if (XXH3_64bits(payload.data(), payload.size()) != get_le(bytes, 72, 8)) return reject("checksum mismatch");

  CompiledModule module;
  module.ptx.assign(payload.substr(0, ptx_size));
  const std::string_view cubin = payload.substr(ptx_size, cubin_size);
  module.cubin.assign(cubin.begin(), cubin.end());
  module.log.assign(payload.substr(ptx_size + cubin_size));
  module.resources = parse_ptxas_report(module.log);
  return module;
}

DiskCache::DiskCache(std::string directory, WarningSink warn)
    : directory_(std::move(directory)), warn_(std::move(warn)) {}

std::string DiskCache::entry_path(const std::string& key) const {
  return directory_ + "/" + key + ".fstk";
}

void DiskCache::warn(const std::string& message) const {
  if (warn_) warn_(message);
}

std::optional<CompiledModule> DiskCache::load(const std::string& key, bool* discarded) const {
  if (discarded != nullptr) *discarded = false;
  const std::string path = entry_path(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int open_error = errno;
    if (open_error != ENOENT && open_error != ENOTDIR) {
      warn("cannot open kernel cache entry " + path + ": " + errno_text(open_error));
    }
    return std::nullopt;
  }
  std::string bytes;
  const bool read_ok = read_all(fd, &bytes);
  const int read_error = errno;
  ::close(fd);
  std::string problem;
  std::optional<CompiledModule> module;
  if (read_ok) {
    module = decode_cache_entry(bytes, key, &problem);
  } else {
    problem = "unreadable: " + errno_text(read_error);
  }
  if (!module) {
    if (discarded != nullptr) *discarded = true;
    const bool removed = ::unlink(path.c_str()) == 0 || errno == ENOENT;
    const int unlink_error = errno;
    warn("kernel cache entry " + path + " is corrupt (" + problem + "); " +
         (removed ? "deleted it" : "could not delete it: " + errno_text(unlink_error)) + "; recompiling");
  }
  return module;
}

bool DiskCache::store(const std::string& key, const CompiledModule& module) const {
  const std::string fallback = "; keeping compiled kernels in memory only";
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    warn("cannot create the kernel cache directory " + directory_ + ": " + error.message() + fallback);
    return false;
  }
  const std::string entry = encode_cache_entry(key, module);
  std::string temp_path = directory_ + "/." + key + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp_path.data());
  if (fd < 0) {
    const int create_error = errno;
    warn("cannot write to the kernel cache directory " + directory_ + ": " + errno_text(create_error) +
         fallback);
    return false;
  }
  const bool written = write_all(fd, entry) && ::fsync(fd) == 0;
  const int write_error = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temp_path.c_str(), entry_path(key).c_str()) != 0) {
    const int failure = !written ? write_error : errno;  // from close or rename
    ::unlink(temp_path.c_str());
    warn("cannot write kernel cache entry " + entry_path(key) + ": " + errno_text(failure) + fallback);
    return false;
  }
  // Make the rename itself durable; a failure here costs at most a recompile.
  const int directory_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
  return true;
}

}  // namespace fstitch::jit
