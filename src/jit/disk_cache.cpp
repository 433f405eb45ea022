#include "jit/disk_cache.hpp"

// Inlined so that libfstitch needs no libxxhash at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
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

DiskCache::DiskCache(std::string directory, WarningSink warn, uid_t owner)
    : directory_(std::move(directory)), warn_(std::move(warn)), owner_(owner) {}

std::string DiskCache::entry_name(const std::string& key) {
  return key + ".fstk";
}

std::string DiskCache::entry_path(const std::string& key) const {
  return directory_ + "/" + entry_name(key);
}

void DiskCache::warn(const std::string& message) const {
  if (warn_) warn_(message);
}

// The folder, held open for one load or store, or nothing (warned about when it is not
// trusted, once per cache).
std::optional<TrustedCacheDir> DiskCache::open_directory(MissingDir missing,
                                                         const std::string& fallback) const {
  DirOpening opening = TrustedCacheDir::open(directory_, missing, owner_);
  switch (opening.outcome) {
    case DirOutcome::kOpened:
      return std::move(opening.dir);
    case DirOutcome::kMissing:
      return std::nullopt;
    case DirOutcome::kUntrusted:
      if (!warned_untrusted_.exchange(true)) {
        warn("kernel cache directory " + directory_ + " is not trusted: " + opening.problem +
             "; ignoring it and keeping compiled kernels in memory only (the directory must be yours and "
             "writable only by you: chmod 700)");
      }
      return std::nullopt;
    case DirOutcome::kFailed:
      break;
  }
  if (missing == MissingDir::kCreate) {
    warn("cannot use the kernel cache directory " + directory_ + ": " + opening.problem + fallback);
  }
  return std::nullopt;
}

std::optional<CompiledModule> DiskCache::load(const std::string& key, bool* discarded) const {
  if (discarded != nullptr) *discarded = false;
  const std::optional<TrustedCacheDir> dir = open_directory(MissingDir::kLeaveMissing, "");
  if (!dir) return std::nullopt;
  const std::string name = entry_name(key);
  const std::string path = dir->entry_path(name);
  const EntryRead entry = dir->read(name, kMaxEntryBytes);
  if (entry.outcome == EntryOutcome::kMissing) return std::nullopt;
  if (entry.outcome == EntryOutcome::kUntrusted) {
    warn("kernel cache entry " + path + " is not trusted: " + entry.problem + "; ignoring it; recompiling");
    return std::nullopt;
  }
  std::string problem;
  std::optional<CompiledModule> module;
  if (entry.outcome == EntryOutcome::kRead) {
    module = decode_cache_entry(entry.bytes, key, &problem);
  } else {
    problem = "unreadable: " + entry.problem;
  }
  if (!module) {
    if (discarded != nullptr) *discarded = true;
    std::string remove_problem;
    const bool removed = dir->remove(name, &remove_problem);
    warn("kernel cache entry " + path + " is corrupt (" + problem + "); " +
         (removed ? "deleted it" : "could not delete it: " + remove_problem) + "; recompiling");
  }
  return module;
}

bool DiskCache::store(const std::string& key, const CompiledModule& module) const {
  const std::string fallback = "; keeping compiled kernels in memory only";
  const std::optional<TrustedCacheDir> dir = open_directory(MissingDir::kCreate, fallback);
  if (!dir) return false;
  std::string problem;
  if (!dir->write(entry_name(key), encode_cache_entry(key, module), &problem)) {
    warn(problem + fallback);
    return false;
  }
  dir->sync();  // makes the rename durable; a failure costs at most a recompile
  return true;
}

}  // namespace fstitch::jit
