#include "runtime/host/object_cache.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "support/error.hpp"

namespace fstitch::host {
namespace fs = std::filesystem;
namespace {

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// A name in `dir` no other process or thread uses at the same time.
fs::path unique_sibling(const fs::path& target) {
  static std::atomic<unsigned long> counter{0};
  return target.parent_path() / (target.filename().string() + ".tmp." + std::to_string(getpid()) + "." +
                                 std::to_string(counter.fetch_add(1)));
}

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

std::optional<HostObjectCache> HostObjectCache::open(const std::string& requested) {
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
  const fs::path dir = base / "host";
  std::error_code error;
  fs::create_directories(dir, error);
  if (!fs::is_directory(dir, error) || access(dir.c_str(), W_OK) != 0) return std::nullopt;
  return HostObjectCache(dir);
}

std::optional<fs::path> HostObjectCache::find(const std::string& key) const {
  const fs::path object = object_path(key);
  std::error_code error;
  if (!fs::exists(object, error)) return std::nullopt;
  const std::optional<std::string> sum = read_file(sum_path(key));
  const std::optional<std::string> bytes = read_file(object);
  if (!sum || !bytes || *sum != hex64(fnv1a64(*bytes))) {
    discard(key);
    return std::nullopt;
  }
  return object;
}

fs::path HostObjectCache::store(const std::string& key, const fs::path& built) const {
  const std::optional<std::string> bytes = read_file(built);
  if (!bytes) fail(StatusCode::kInternal, "host backend: cannot read the compiled object " + built.string());
  const fs::path sum = sum_path(key);
  const fs::path sum_temporary = unique_sibling(sum);
  write_file(sum_temporary, hex64(fnv1a64(*bytes)));
  std::error_code error;
  fs::rename(sum_temporary, sum, error);
  if (error) {
    fs::remove(sum_temporary, error);
    fail(StatusCode::kInternal, "host backend: cannot write " + sum.string() + ": " + error.message());
  }
  const fs::path object = object_path(key);
  fs::rename(built, object, error);
  if (error) {
    // Another file system: copy next to the target first, then rename.
    const fs::path object_temporary = unique_sibling(object);
    write_file(object_temporary, *bytes);
    fs::rename(object_temporary, object, error);
    if (error) {
      fs::remove(object_temporary, error);
      fail(StatusCode::kInternal, "host backend: cannot write " + object.string() + ": " + error.message());
    }
  }
  return object;
}

void HostObjectCache::discard(const std::string& key) const {
  std::error_code error;
  fs::remove(object_path(key), error);
  fs::remove(sum_path(key), error);
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
