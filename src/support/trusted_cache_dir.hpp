// On-disk cache folders the library may trust with code, and safe access to their entries.
//
// The rules (docs/API.md, "Cache trust"): a cache folder is a directory owned by the user and
// writable by no one else (created 0700); an entry is a regular file owned by the user, opened
// without following symbolic links and without blocking; every file is written to a fresh
// exclusively created name (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) and renamed into place.
// Entries are reached through the folder's open descriptor, so the folder that was checked is
// the folder that is read and written, whatever happens to its path meanwhile.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fstitch {

// Why a directory with status `info` may not hold cache entries of the user `owner`: it is not
// a directory, someone else owns it, or its group or others may write it. Nothing when it may.
std::optional<std::string> cache_dir_distrust(const struct stat& info, uid_t owner);

// Why a file with status `info` is not a cache entry of `owner`: it is not a regular file
// (a FIFO, a device, a directory...), or someone else owns it. Nothing when it is one.
std::optional<std::string> cache_entry_distrust(const struct stat& info, uid_t owner);

enum class MissingDir { kCreate, kLeaveMissing };

enum class DirOutcome {
  kOpened,     // trusted and open
  kMissing,    // does not exist (only with MissingDir::kLeaveMissing)
  kUntrusted,  // exists but fails the trust rules: the caller ignores it, with a warning
  kFailed,     // cannot be created or opened
};

enum class EntryOutcome {
  kRead,       // the bytes are those of a trusted entry
  kMissing,    // no entry of that name
  kUntrusted,  // a symbolic link, not a regular file, or owned by someone else: ignore it
  kFailed,     // a trusted entry that cannot be read whole (I/O error, larger than the limit)
};

struct EntryRead {
  EntryOutcome outcome = EntryOutcome::kMissing;
  std::string bytes;
  std::string problem;  // why, for kUntrusted and kFailed
};

struct DirOpening;

// A cache folder that passed the trust check, held open. Move-only.
class TrustedCacheDir {
 public:
  // Opens the folder `path` for the user `owner` (normally geteuid()). With kCreate, missing
  // folders on the way are created with mode 0700. A symbolic link to a folder is followed and
  // its target is checked.
  static DirOpening open(const std::string& path, MissingDir missing, uid_t owner);
  // The subfolder `name` of this folder, under the same rules.
  DirOpening open_subfolder(const std::string& name, MissingDir missing) const;

  TrustedCacheDir(TrustedCacheDir&& other) noexcept;
  TrustedCacheDir& operator=(TrustedCacheDir&& other) noexcept;
  TrustedCacheDir(const TrustedCacheDir&) = delete;
  TrustedCacheDir& operator=(const TrustedCacheDir&) = delete;
  ~TrustedCacheDir();

  const std::string& path() const { return path_; }
  std::string entry_path(const std::string& name) const { return path_ + "/" + name; }

  // The whole entry `name`, read only when it is trusted; larger than `max_bytes` is kFailed.
  EntryRead read(const std::string& name, std::uint64_t max_bytes) const;
  // Writes `bytes` as the entry `name`: to a fresh temporary entry created exclusively, without
  // following links, fsynced, then renamed over `name`. On failure returns false with
  // *problem set and leaves no temporary file behind.
  bool write(const std::string& name, std::string_view bytes, std::string* problem) const;
  // Removes the entry `name` (a link itself, never its target). False with *problem when an
  // existing entry cannot be removed.
  bool remove(const std::string& name, std::string* problem) const;
  // Makes renames into this folder durable; failures only cost a recompile, so are ignored.
  void sync() const;

 private:
  TrustedCacheDir(int fd, std::string path, uid_t owner);
  static DirOpening open_at(int parent_fd, const std::string& name, const std::string& path,
                            MissingDir missing, uid_t owner);

  int fd_ = -1;
  std::string path_;
  uid_t owner_ = 0;
};

struct DirOpening {
  DirOutcome outcome = DirOutcome::kFailed;
  std::optional<TrustedCacheDir> dir;  // set for kOpened
  std::string problem;                 // why, for kUntrusted and kFailed
};

}  // namespace fstitch
