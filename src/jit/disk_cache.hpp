// The on-disk kernel cache: one file per key in a directory shared by processes.
//
// File "<key>.fstk", all integers little-endian:
//   offset  0  8 bytes   magic "FSTKCACH"
//           8  u32       format version (kCacheFormatVersion)
//          12  u32       header size (80)
//          16  32 bytes  the key, lowercase hex
//          48  u64       PTX bytes
//          56  u64       CUBIN bytes
//          64  u64       log bytes
//          72  u64       XXH3-64 of the payload
//          80  payload:  PTX, CUBIN, log
// Files are written to a fresh, exclusively created temporary name in the same directory,
// fsynced and renamed into place, so readers see a whole entry or none. The directory and its
// entries follow the cache trust rules of support/trusted_cache_dir.hpp: a directory or an
// entry that fails them is ignored with a warning.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "jit/compile.hpp"
#include "support/trusted_cache_dir.hpp"

namespace fstitch::jit {

inline constexpr uint32_t kCacheFormatVersion = 1;
inline constexpr std::size_t kCacheHeaderSize = 80;

// Receives one line per problem the cache recovered from (corrupt or untrusted entry,
// untrusted or unwritable dir).
using WarningSink = std::function<void(const std::string& message)>;

// Serializes a module (its resources are recomputed from the log on read).
std::string encode_cache_entry(const std::string& key, const CompiledModule& module);

// Parses and verifies an entry written for `key`. On any mismatch (magic, version, header
// size, key, lengths against the byte count, checksum) returns nothing and says why in
// `problem`.
std::optional<CompiledModule> decode_cache_entry(std::string_view bytes, const std::string& key,
                                                 std::string* problem);

// One cache directory. Thread-safe: concurrent loads and stores, from this process or
// others, are safe.
class DiskCache {
 public:
  // `directory` is created (with parents, mode 0700) at the first store. Entries are trusted
  // only in a directory, and only as files, that the user `owner` owns.
  DiskCache(std::string directory, WarningSink warn, uid_t owner = geteuid());

  const std::string& directory() const { return directory_; }
  // The path of the entry for `key`.
  std::string entry_path(const std::string& key) const;

  // The entry for `key`, or nothing when there is none. A corrupt or truncated entry is
  // deleted, reported through the warning sink, treated as missing, and sets *discarded. An
  // untrusted entry (a link, not a regular file, someone else's) or directory is ignored with
  // a warning; a read-only directory is read.
  std::optional<CompiledModule> load(const std::string& key, bool* discarded = nullptr) const;
  // Writes the entry atomically. Returns false, with a warning, when the directory or the
  // file cannot be written; the caller then keeps the module in memory only.
  bool store(const std::string& key, const CompiledModule& module) const;

 private:
  static std::string entry_name(const std::string& key);
  void warn(const std::string& message) const;
  std::optional<TrustedCacheDir> open_directory(MissingDir missing, const std::string& fallback) const;

  std::string directory_;
  WarningSink warn_;
  uid_t owner_;
  mutable std::atomic<bool> warned_untrusted_{false};
};

}  // namespace fstitch::jit
