// The host object cache cannot be turned against its user, and survives faults: folders
// others may write or someone else owns, entries that are links, FIFOs or someone else's,
// links planted at temporary names, a read-only cache, a full disk, a cache folder deleted
// while the compiler runs.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/child_process.hpp"
#include "host_test_support.hpp"
#include "runtime/host/compiler.hpp"
#include "runtime/host/object_cache.hpp"

namespace fstitch::host::testing {
namespace {

namespace fs = std::filesystem;
using fstitch::testing::become_unprivileged;
using fstitch::testing::can_act_as_others;
using fstitch::testing::chown_tree;
using fstitch::testing::kStrangerUid;

// Compile options for one cache folder that record the warnings.
struct WatchedCompile {
  WatchedCompile() {
    options.cache_dir = folder.path();
    options.warn = [this](const std::string& message) { warnings.push_back(message); };
  }
  fs::path host_folder() const { return fs::path(folder.path()) / "host"; }
  bool warned(const std::string& part) const {
    for (const std::string& warning : warnings) {
      if (warning.find(part) != std::string::npos) return true;
    }
    return false;
  }
  std::string all_warnings() const {
    std::string text;
    for (const std::string& warning : warnings) text += warning + "\n";
    return text;
  }
  // Compiles kSmallKernel (with `suffix`: another text) and checks that the result runs.
  std::shared_ptr<HostModule> compile(const std::string& suffix = "") {
    std::shared_ptr<HostModule> module = HostModule::compile(kSmallKernel + suffix, options);
    expect_fills(*module);
    return module;
  }
  // Compiles once so that the entry exists; returns its object path.
  fs::path populate() {
    const std::shared_ptr<HostModule> module = compile();
    EXPECT_EQ(fs::path(module->object_path()).parent_path(), host_folder());
    return module->object_path();
  }

  CacheFolder folder;
  HostCompileOptions options;
  std::vector<std::string> warnings;
};

fs::path sum_of(const fs::path& object) {
  fs::path sum = object;
  return sum.replace_extension(".sum");
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool is_under(const fs::path& path, const fs::path& folder) {
  const std::string text = path.string();
  return text.compare(0, folder.string().size(), folder.string()) == 0;
}

TEST(HostCacheTrust, NewCacheFoldersArePrivate) {
  WatchedCompile watched;
  const fs::path object = watched.populate();
  for (const fs::path& folder : {fs::path(watched.folder.path()), watched.host_folder()}) {
    EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all) << folder;
  }
  EXPECT_EQ(fs::status(sum_of(object)).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(watched.warnings.empty()) << watched.all_warnings();
}

TEST(HostCacheTrust, AFolderOthersMayWriteIsNotUsed) {
  for (const bool host_subfolder : {false, true}) {
    WatchedCompile watched;
    watched.populate();
    const fs::path shared = host_subfolder ? watched.host_folder() : fs::path(watched.folder.path());
    ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
    const std::shared_ptr<HostModule> module = watched.compile();
    EXPECT_FALSE(module->loaded_from_cache()) << "an object anyone could have planted is code";
    EXPECT_FALSE(is_under(module->object_path(), watched.folder.path())) << module->object_path();
    EXPECT_TRUE(watched.warned(shared.string() + " is not trusted: others may write it (mode 0777)"))
        << watched.all_warnings();
    EXPECT_TRUE(watched.warned("compiling without the cache")) << watched.all_warnings();
    EXPECT_EQ(names_in(watched.host_folder()).size(), 2u) << "nothing is written to it";
  }
}

TEST(HostCacheTrust, AFolderOfAnotherUserIsNotUsed) {
  {
    // The owner as a parameter: the check without root.
    WatchedCompile watched;
    watched.populate();
    std::vector<std::string> warnings;
    EXPECT_FALSE(HostObjectCache::open(
                     watched.folder.path(), [&](const std::string& message) { warnings.push_back(message); },
                     geteuid() + 1)
                     .has_value());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("not by this user"), std::string::npos) << warnings[0];
  }
  if (!can_act_as_others()) GTEST_SKIP() << "chown needs root";
  WatchedCompile watched;
  watched.populate();
  chown_tree(watched.host_folder(), kStrangerUid);
  EXPECT_FALSE(watched.compile()->loaded_from_cache());
  EXPECT_TRUE(watched.warned("is not trusted: it is owned by uid " + std::to_string(kStrangerUid)))
      << watched.all_warnings();
}

TEST(HostCacheTrust, AnEntryOfAnotherUserIsNotLoaded) {
  if (!can_act_as_others()) GTEST_SKIP() << "chown needs root";
  for (const bool object_file : {true, false}) {
    WatchedCompile watched;
    const fs::path object = watched.populate();
    const fs::path foreign = object_file ? object : sum_of(object);
    ASSERT_EQ(chown(foreign.c_str(), kStrangerUid, kStrangerUid), 0);
    EXPECT_FALSE(watched.compile()->loaded_from_cache());
    EXPECT_TRUE(watched.warned(foreign.string() + " is not trusted: it is owned by uid " +
                               std::to_string(kStrangerUid)))
        << watched.all_warnings();
    // The fresh compile replaced it: the next one is a hit again.
    EXPECT_TRUE(watched.compile()->loaded_from_cache()) << watched.all_warnings();
  }
}

TEST(HostCacheTrust, ALinkAtAnEntryPathIsNotFollowed) {
  WatchedCompile elsewhere;
  const fs::path target = elsewhere.populate();
  WatchedCompile watched;
  const fs::path object = watched.populate();
  ASSERT_EQ(object.filename(), target.filename()) << "one text, one key";
  fs::remove(object);
  fs::create_symlink(target, object);
  fs::copy_file(sum_of(target), sum_of(object), fs::copy_options::overwrite_existing);
  const std::shared_ptr<HostModule> module = watched.compile();
  EXPECT_FALSE(module->loaded_from_cache());
  EXPECT_TRUE(watched.warned(object.string() + " is not trusted: it is a symbolic link"))
      << watched.all_warnings();
}

TEST(HostCacheTrust, LinksPlantedAtTemporaryNamesAreNotFollowed) {
  WatchedCompile first;
  const std::string key = first.populate().stem().string();
  // A fresh cache with links, at every name a writer choosing names by process id and a
  // counter could pick, to a file of the user's.
  WatchedCompile watched;
  ASSERT_TRUE(fs::create_directories(watched.host_folder()));
  ASSERT_EQ(chmod(watched.host_folder().c_str(), 0700), 0);
  const fs::path victim = fs::path(watched.folder.path()) / "victim";
  std::ofstream(victim) << "precious";
  for (int counter = 0; counter < 1000; ++counter) {
    for (const char* suffix : {".sum", ".so"}) {
      fs::create_symlink(victim, watched.host_folder() / (key + suffix + ".tmp." + std::to_string(getpid()) +
                                                          "." + std::to_string(counter)));
    }
  }
  const std::shared_ptr<HostModule> module = watched.compile();
  EXPECT_FALSE(module->loaded_from_cache());
  EXPECT_EQ(contents(victim), "precious");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(watched.host_folder() / (key + ".sum"))));
  EXPECT_EQ(names_in(watched.host_folder()).size(), 2u + 2000u) << "no temporary file remains";
}

TEST(HostCacheTrust, AFifoAtAnEntryPathDoesNotHang) {
  for (const bool object_file : {false, true}) {
    WatchedCompile watched;
    const fs::path object = watched.populate();
    const fs::path fifo = object_file ? object : sum_of(object);
    fs::remove(fifo);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    FSTITCH_EXPECT_CHILD_PASSES(120, [&] {
      EXPECT_FALSE(watched.compile()->loaded_from_cache());
      EXPECT_TRUE(watched.warned(fifo.string() + " is not trusted: it is a FIFO, not a regular file"))
          << watched.all_warnings();
    });
  }
}

TEST(HostCacheTrust, AReadOnlyCacheIsRead) {
  WatchedCompile watched;
  watched.populate();
  const uid_t user = can_act_as_others() ? kStrangerUid : geteuid();
  if (can_act_as_others()) chown_tree(watched.folder.path(), user);
  for (const fs::path& folder : {watched.host_folder(), fs::path(watched.folder.path())}) {
    ASSERT_EQ(chmod(folder.c_str(), 0500), 0);
  }
  FSTITCH_EXPECT_CHILD_PASSES(120, [&] {
    become_unprivileged(user);
    EXPECT_TRUE(watched.compile()->loaded_from_cache()) << watched.all_warnings();
    EXPECT_TRUE(watched.warnings.empty()) << watched.all_warnings();
  });
  for (const fs::path& folder : {fs::path(watched.folder.path()), watched.host_folder()}) {
    chmod(folder.c_str(), 0700);  // so that the folder can be removed
  }
}

TEST(HostCacheTrust, ACacheFolderDeletedDuringTheCompileCostsOnlyReuse) {
  const HostCompiler compiler = find_host_compiler(CompileTimeout{});
  WatchedCompile watched;
  const CacheFolder tools;
  const fs::path deleting_compiler = fs::path(tools.path()) / "c++-deleting-the-cache";
  const fs::path deletions = fs::path(tools.path()) / "deletions";
  std::ofstream(deleting_compiler) << "#!/bin/sh\nrm -rf \"$FSTITCH_TEST_DOOMED_CACHE\" && printf x >>'"
                                   << deletions.string() << "'\nexec '" << compiler.path << "' \"$@\"\n";
  fs::permissions(deleting_compiler, fs::perms::owner_all);
  const ScopedEnvironment doomed("FSTITCH_TEST_DOOMED_CACHE", watched.folder.path().c_str());
  const ScopedEnvironment cxx("FSTITCH_HOST_CXX", deleting_compiler.c_str());
  const std::string last_text = "\n// attempt 2\n";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::shared_ptr<HostModule> module =
        watched.compile("\n// attempt " + std::to_string(attempt) + "\n");
    EXPECT_FALSE(module->loaded_from_cache());
    EXPECT_GE(contents(deletions).size(), static_cast<std::size_t>(attempt + 1))
        << "the compiler deleted the cache";
  }
  // Each compile made the folder again and stored its object.
  EXPECT_TRUE(watched.compile(last_text)->loaded_from_cache()) << watched.all_warnings();
}

TEST(HostCacheTrust, AFullCacheDiskCostsOnlyReuse) {
  WatchedCompile watched;
  const fs::path disk = fs::path(watched.folder.path()) / "disk";
  ASSERT_TRUE(fs::create_directory(disk));
  watched.options.cache_dir = disk.string();
  FSTITCH_EXPECT_CHILD_PASSES(120, [&] {
    // A tiny file system of its own, in a mount namespace of its own, filled up.
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k,mode=0700") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    ASSERT_EQ(mkdir((disk / "host").c_str(), 0700), 0);
    {
      std::ofstream filler(disk / "filler", std::ios::binary);
      const std::string block(4096, 'x');
      for (int i = 0; i < 64 && filler; ++i) filler << block;
    }
    const std::shared_ptr<HostModule> module = watched.compile();
    EXPECT_FALSE(module->loaded_from_cache());
    EXPECT_TRUE(watched.warned("the host object is not cached")) << watched.all_warnings();
    EXPECT_EQ(names_in(disk), (std::vector<std::string>{"filler", "host"}));
    EXPECT_TRUE(names_in(disk / "host").empty()) << "no temporary file remains";
  });
}

TEST(HostCacheTrust, AStoreThatCannotWriteLeavesNoTemporaryFiles) {
  WatchedCompile watched;
  const fs::path object = watched.populate();
  const CacheFolder scratch;
  const fs::path built = fs::path(scratch.path()) / "built.so";
  std::ofstream(built, std::ios::binary) << std::string(8192, 'o');
  FSTITCH_EXPECT_CHILD_PASSES(60, [&] {
    // Files may not grow past 1 KiB: writes fail with EFBIG, as they fail on a full disk.
    std::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {1024, 1024};
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    const std::optional<HostObjectCache> cache =
        HostObjectCache::open(watched.folder.path(), watched.options.warn);
    ASSERT_TRUE(cache.has_value());
    EXPECT_FALSE(cache->store("0123456789abcdef", built).has_value());
    EXPECT_TRUE(watched.warned("the host object is not cached")) << watched.all_warnings();
    std::vector<std::string> expected = {object.filename().string(), sum_of(object).filename().string()};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(names_in(watched.host_folder()), expected) << "no temporary or partial entry remains";
  });
}

}  // namespace
}  // namespace fstitch::host::testing
