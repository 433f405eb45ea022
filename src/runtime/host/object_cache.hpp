// The on-disk cache of compiled kernel objects: keys, verified lookups, atomic stores.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fstitch::host {

// FNV-1a, 64 bits.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state = 0xcbf29ce484222325ull);

// The cache key of an object built from `parts` (header text, compiler, flags, source...),
// as a file name stem. The one place that chooses the hash: each part is hashed with its
// length, so no two different part lists give the same input.
std::string host_object_key(const std::vector<std::string_view>& parts);

// Objects live in <dir>/<key>.so beside <key>.sum, the hash of the object's bytes, which
// lookups verify. Writes go through a temporary name and rename(), so a reader sees a whole
// file or none, and concurrent writers of one key both leave a valid entry.
class HostObjectCache {
 public:
  explicit HostObjectCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The cache folder in use: `requested` when not empty, else FSTITCH_CACHE_DIR, else
  // $XDG_CACHE_HOME/fstitch, else $HOME/.cache/fstitch, each with a "host" subfolder;
  // created when missing. Nothing when it cannot be created.
  static std::optional<HostObjectCache> open(const std::string& requested);

  const std::filesystem::path& dir() const { return dir_; }

  // The verified object for `key`, or nothing. An entry that fails verification is removed.
  std::optional<std::filesystem::path> find(const std::string& key) const;

  // Moves `built` into the cache under `key` and returns its cached path.
  std::filesystem::path store(const std::string& key, const std::filesystem::path& built) const;

  void discard(const std::string& key) const;

 private:
  std::filesystem::path object_path(const std::string& key) const { return dir_ / (key + ".so"); }
  std::filesystem::path sum_path(const std::string& key) const { return dir_ / (key + ".sum"); }

  std::filesystem::path dir_;
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
