#include "support/trusted_cache_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

namespace fstitch {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string owner_problem(uid_t found, uid_t expected) {
  return "owned by uid " + std::to_string(found) + ", not by this user (uid " + std::to_string(expected) +
         ")";
}

// Unpredictable, so that no one can plant a link or a file at the name before it is created.
std::string random_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t bits = counter.fetch_add(1) * 0x9e3779b97f4a7c15ull;
  try {
    std::random_device device;
    bits ^= (std::uint64_t{device()} << 32) ^ device();
  } catch (...) {
    bits ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
            (static_cast<std::uint64_t>(getpid()) << 40);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

bool write_all(int fd, std::string_view bytes) {
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

// mkdir -p with mode 0700 for the folders it creates. Returns the first error other than
// EEXIST (0 when none); the open that follows decides whether it mattered.
int make_folders(const std::string& path) {
  int first_error = 0;
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST && first_error == 0) {
      first_error = errno;
    }
    if (slash == std::string::npos) return first_error;
  }
}

}  // namespace

std::optional<std::string> cache_dir_distrust(const struct stat& info, uid_t owner) {
  if (!S_ISDIR(info.st_mode)) return "it is " + file_kind(info.st_mode) + ", not a directory";
  if (info.st_uid != owner) return "it is " + owner_problem(info.st_uid, owner);
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "others may write it (mode " + mode_text(info.st_mode) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> cache_entry_distrust(const struct stat& info, uid_t owner) {
  if (!S_ISREG(info.st_mode)) return "it is " + file_kind(info.st_mode) + ", not a regular file";
  if (info.st_uid != owner) return "it is " + owner_problem(info.st_uid, owner);
  return std::nullopt;
}

TrustedCacheDir::TrustedCacheDir(int fd, std::string path, uid_t owner)
    : fd_(fd), path_(std::move(path)), owner_(owner) {}

TrustedCacheDir::TrustedCacheDir(TrustedCacheDir&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), owner_(other.owner_) {}

TrustedCacheDir& TrustedCacheDir::operator=(TrustedCacheDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    owner_ = other.owner_;
  }
  return *this;
}

TrustedCacheDir::~TrustedCacheDir() {
  if (fd_ >= 0) ::close(fd_);
}

DirOpening TrustedCacheDir::open(const std::string& path, MissingDir missing, uid_t owner) {
  const int make_error = missing == MissingDir::kCreate ? make_folders(path) : 0;
  DirOpening opening = open_at(AT_FDCWD, path, path, missing, owner);
  if (opening.outcome == DirOutcome::kFailed && make_error != 0 && errno == ENOENT) {
    opening.problem = "cannot create it: " + errno_text(make_error);
  }
  return opening;
}

DirOpening TrustedCacheDir::open_subfolder(const std::string& name, MissingDir missing) const {
  const int make_error =
      missing == MissingDir::kCreate && ::mkdirat(fd_, name.c_str(), 0700) != 0 && errno != EEXIST ? errno
                                                                                                   : 0;
  DirOpening opening = open_at(fd_, name, entry_path(name), missing, owner_);
  if (opening.outcome == DirOutcome::kFailed && make_error != 0 && errno == ENOENT) {
    opening.problem = "cannot create it: " + errno_text(make_error);
  }
  return opening;
}

DirOpening TrustedCacheDir::open_at(int parent_fd, const std::string& name, const std::string& path,
                                    MissingDir missing, uid_t owner) {
  DirOpening opening;
  const int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int open_error = errno;
    if (open_error == ENOENT && missing == MissingDir::kLeaveMissing) {
      opening.outcome = DirOutcome::kMissing;
    } else {
      opening.outcome = DirOutcome::kFailed;
      opening.problem =
          open_error == ENOTDIR ? "it is not a directory" : "cannot open it: " + errno_text(open_error);
    }
    errno = open_error;
    return opening;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    opening.problem = "cannot inspect it: " + errno_text(errno);
    ::close(fd);
    return opening;
  }
  if (std::optional<std::string> distrust = cache_dir_distrust(info, owner)) {
    opening.outcome = DirOutcome::kUntrusted;
    opening.problem = *distrust;
    ::close(fd);
    return opening;
  }
  opening.outcome = DirOutcome::kOpened;
  opening.dir.emplace(TrustedCacheDir(fd, path, owner));
  return opening;
}

EntryRead TrustedCacheDir::read(const std::string& name, std::uint64_t max_bytes) const {
  EntryRead result;
  // O_NONBLOCK: opening a FIFO or a device must not wait; only regular files are read.
  const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int open_error = errno;
    if (open_error == ENOENT) return result;
    if (open_error == ELOOP) {
      result.outcome = EntryOutcome::kUntrusted;
      result.problem = "it is a symbolic link";
    } else if (open_error == ENXIO) {
      result.outcome = EntryOutcome::kUntrusted;
      result.problem = "it is not a regular file";
    } else {
      result.outcome = EntryOutcome::kFailed;
      result.problem = "cannot open it: " + errno_text(open_error);
    }
    return result;
  }
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    result.outcome = EntryOutcome::kFailed;
    result.problem = "cannot inspect it: " + errno_text(errno);
  } else if (std::optional<std::string> distrust = cache_entry_distrust(info, owner_)) {
    result.outcome = EntryOutcome::kUntrusted;
    result.problem = *distrust;
  } else if (info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) > max_bytes) {
    result.outcome = EntryOutcome::kFailed;
    result.problem = std::to_string(info.st_size) + " bytes, more than an entry can be";
  } else {
    result.bytes.assign(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t done = 0;
    int read_error = 0;
    while (done < result.bytes.size()) {
      const ssize_t got = ::read(fd, result.bytes.data() + done, result.bytes.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) read_error = errno;
      if (got <= 0) break;  // shorter than fstat said: the caller's verification rejects it
      done += static_cast<std::size_t>(got);
    }
    result.bytes.resize(done);
    if (read_error != 0) {
      result.outcome = EntryOutcome::kFailed;
      result.problem = "cannot read it: " + errno_text(read_error);
      result.bytes.clear();
    } else {
      result.outcome = EntryOutcome::kRead;
    }
  }
  ::close(fd);
  return result;
}

bool TrustedCacheDir::write(const std::string& name, std::string_view bytes, std::string* problem) const {
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = "." + name + ".tmp." + random_suffix();
    fd = ::openat(fd_, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *problem = "cannot create a file in " + path_ + ": " + errno_text(errno);
    return false;
  }
  const bool written = write_all(fd, bytes) && ::fsync(fd) == 0;
  int failure = errno;
  const bool closed = ::close(fd) == 0;
  if (written && !closed) failure = errno;
  const bool renamed = written && closed && ::renameat(fd_, temporary.c_str(), fd_, name.c_str()) == 0;
  if (written && closed && !renamed) failure = errno;
  if (!renamed) {
    ::unlinkat(fd_, temporary.c_str(), 0);
    *problem = "cannot write " + entry_path(name) + ": " + errno_text(failure);
    return false;
  }
  return true;
}

bool TrustedCacheDir::remove(const std::string& name, std::string* problem) const {
  if (::unlinkat(fd_, name.c_str(), 0) == 0 || errno == ENOENT) return true;
  *problem = errno_text(errno);
  return false;
}

void TrustedCacheDir::sync() const {
  ::fsync(fd_);
}

}  // namespace fstitch
