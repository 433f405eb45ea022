// The on-disk cache of compiled kernel objects: keys, trusted and verified lookups, atomic
// stores.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/trusted_cache_dir.hpp"

namespace fstitch::host {

// FNV-1a, 64 bits.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state = 0xcbf29ce484222325ull);

// The cache key of an object built from `parts` (header text, compiler, flags, source...),
// as a file name stem. The one place that chooses the hash: each part is hashed with its
// length, so no two different part lists give the same input.
std::string host_object_key(const std::vector<std::string_view>& parts);

// Receives one line per cache problem the backend worked around.
using CacheWarningSink = std::function<void(const std::string& message)>;

// Objects live in <dir>/<key>.so beside <key>.sum, the hash of the object's bytes, which
// lookups verify. The cache folder and its "host" subfolder follow the cache trust rules of
// support/trusted_cache_dir.hpp (the user's, writable by no one else; entries regular files
// of the user's), since a loaded object is code. Writes go to fresh, exclusively created
// temporary names and rename(), so a reader sees a whole file or none, and concurrent writers
// of one key both leave a valid entry.
class HostObjectCache {
 public:
  // The cache folder in use: `requested` when not empty, else FSTITCH_CACHE_DIR, else
  // $XDG_CACHE_HOME/fstitch, else $HOME/.cache/fstitch, each with a "host" subfolder;
  // created (mode 0700) when missing. Nothing when there is no such folder, or when it cannot
  // be created or opened or is not trusted by the user `owner` (the last two with a warning).
  // A read-only folder is used for lookups.
  static std::optional<HostObjectCache> open(const std::string& requested, const CacheWarningSink& warn,
                                             uid_t owner = geteuid());

  const std::filesystem::path& dir() const { return path_; }

  // The verified object for `key`, or nothing. An entry that fails verification is removed; an
  // untrusted one (a link, not a regular file, someone else's) is ignored with a warning.
  std::optional<std::filesystem::path> find(const std::string& key) const;

  // Copies the object `built` into the cache under `key` and returns its cached path; nothing,
  // with a warning, when the cache cannot be written (full disk, read-only, deleted meanwhile).
  std::optional<std::filesystem::path> store(const std::string& key,
                                             const std::filesystem::path& built) const;

  void discard(const std::string& key) const;

 private:
  HostObjectCache(TrustedCacheDir folder, std::filesystem::path base, CacheWarningSink warn, uid_t owner);
  static std::optional<TrustedCacheDir> open_folder(const std::filesystem::path& base,
                                                    const CacheWarningSink& warn, uid_t owner);
  static std::string object_name(const std::string& key) { return key + ".so"; }
  static std::string sum_name(const std::string& key) { return key + ".sum"; }

  TrustedCacheDir folder_;
  std::filesystem::path base_;
  std::filesystem::path path_;
  CacheWarningSink warn_;
  uid_t owner_;
};

// A fresh folder under `parent`, removed with everything in it when this goes out of scope.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::filesystem::path& parent);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Reads a whole file; nothing when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);
// Writes a whole file; throws Error(kInternal) naming the path on failure.
void write_file(const std::filesystem::path& path, std::string_view contents);

}  // namespace fstitch::host
