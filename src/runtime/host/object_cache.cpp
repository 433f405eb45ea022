#include "runtime/host/object_cache.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "support/error.hpp"

namespace fstitch::host {
namespace fs = std::filesystem;
namespace {

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Larger files are not objects this backend builds; refusing them bounds the read.
constexpr std::uint64_t kMaxObjectBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxSumBytes = 64;

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state) {
  for (unsigned char c : bytes) {
    state ^= c;
    state *= 0x100000001b3ull;
  }
  return state;
}

std::string host_object_key(const std::vector<std::string_view>& parts) {
  std::uint64_t state = fnv1a64("fstitch host object");
  for (std::string_view part : parts) {
    state = fnv1a64(std::to_string(part.size()) + ":", state);
    state = fnv1a64(part, state);
  }
  return hex64(state);
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return contents.str();
}

void write_file(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) fail(StatusCode::kInternal, "host backend: cannot write " + path.string());
}

HostObjectCache::HostObjectCache(TrustedCacheDir folder, fs::path base, CacheWarningSink warn, uid_t owner)
    : folder_(std::move(folder)),
      base_(std::move(base)),
      path_(folder_.path()),
      warn_(std::move(warn)),
      owner_(owner) {}

std::optional<TrustedCacheDir> HostObjectCache::open_folder(const fs::path& base,
                                                            const CacheWarningSink& warn, uid_t owner) {
  DirOpening opening = TrustedCacheDir::open(base.string(), MissingDir::kCreate, owner);
  std::string name = base.string();
  if (opening.outcome == DirOutcome::kOpened) {
    DirOpening host = opening.dir->open_subfolder("host", MissingDir::kCreate);
    name = opening.dir->entry_path("host");
    opening = std::move(host);
  }
  if (opening.outcome == DirOutcome::kOpened) return std::move(opening.dir);
  if (opening.outcome == DirOutcome::kUntrusted) {
    warn("host object cache folder " + name + " is not trusted: " + opening.problem +
         "; compiling without the cache (the folder must be yours and writable only by you: chmod 700)");
  } else {
    warn("cannot use the host object cache folder " + name + ": " + opening.problem +
         "; compiling without the cache");
  }
  return std::nullopt;
}

std::optional<HostObjectCache> HostObjectCache::open(const std::string& requested,
                                                     const CacheWarningSink& warn, uid_t owner) {
  fs::path base;
  if (!requested.empty()) {
    base = requested;
  } else if (const char* dir = environment("FSTITCH_CACHE_DIR")) {
    base = dir;
  } else if (const char* xdg = environment("XDG_CACHE_HOME")) {
    base = fs::path(xdg) / "fstitch";
  } else if (const char* home = environment("HOME")) {
    base = fs::path(home) / ".cache" / "fstitch";
  } else {
    return std::nullopt;
  }
  std::optional<TrustedCacheDir> folder = open_folder(base, warn, owner);
  if (!folder) return std::nullopt;
  return HostObjectCache(std::move(*folder), base, warn, owner);
}

std::optional<fs::path> HostObjectCache::find(const std::string& key) const {
  const EntryRead object = folder_.read(object_name(key), kMaxObjectBytes);
  if (object.outcome == EntryOutcome::kMissing) return std::nullopt;
  const EntryRead sum = folder_.read(sum_name(key), kMaxSumBytes);
  for (const auto& [entry, name] : {std::pair{&object, object_name(key)}, std::pair{&sum, sum_name(key)}}) {
    if (entry->outcome == EntryOutcome::kUntrusted) {
      warn_("host object cache entry " + folder_.entry_path(name) + " is not trusted: " + entry->problem +
            "; ignoring it and compiling again");
      return std::nullopt;
    }
  }
  if (object.outcome != EntryOutcome::kRead || sum.outcome != EntryOutcome::kRead ||
      sum.bytes != hex64(fnv1a64(object.bytes))) {
    discard(key);
    return std::nullopt;
  }
  return fs::path(folder_.entry_path(object_name(key)));
}

std::optional<fs::path> HostObjectCache::store(const std::string& key, const fs::path& built) const {
  const std::optional<std::string> bytes = read_file(built);
  if (!bytes) fail(StatusCode::kInternal, "host backend: cannot read the compiled object " + built.string());
  // Opened again: the folder may have been deleted (and is then made again) since the lookup.
  const std::optional<TrustedCacheDir> folder = open_folder(base_, warn_, owner_);
  if (!folder) return std::nullopt;
  std::string problem;
  const bool stored = folder->write(object_name(key), *bytes, &problem) &&
                      folder->write(sum_name(key), hex64(fnv1a64(*bytes)), &problem);
  if (!stored) {
    std::string ignored;
    folder->remove(object_name(key), &ignored);  // an object without its sum is no entry
    warn_(problem + "; the host object is not cached");
    return std::nullopt;
  }
  folder->sync();
  return fs::path(folder->entry_path(object_name(key)));
}

void HostObjectCache::discard(const std::string& key) const {
  std::string ignored;
  folder_.remove(object_name(key), &ignored);
  folder_.remove(sum_name(key), &ignored);
}

TemporaryFolder::TemporaryFolder(const fs::path& parent) {
  std::string pattern = (parent / "fstitch-host-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    fail(StatusCode::kInternal, "host backend: cannot create a temporary folder in " + parent.string() +
                                    ": " + std::strerror(errno));
  }
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code error;
  fs::remove_all(path_, error);
}

}  // namespace fstitch::host
