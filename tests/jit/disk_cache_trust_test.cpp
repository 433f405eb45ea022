// The disk cache's trust rules and fault tolerance: a directory others may write or someone
// else owns, entries that are links, FIFOs or someone else's, a read-only directory, a full disk.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "../common/child_process.hpp"
#include "jit/disk_cache.hpp"
#include "jit_test_support.hpp"

namespace fstitch::jit {
namespace {

using fstitch::testing::become_unprivileged;
using fstitch::testing::can_act_as_others;
using fstitch::testing::chown_tree;
using fstitch::testing::kStrangerUid;
using testing::directory_entries;
using testing::read_file;
using testing::sample_module;
using testing::ScratchDir;
using testing::write_file;

const std::string kKey = "00112233445566778899aabbccddeeff";

// A cache in its own scratch directory that records its warnings.
struct WatchedCache {
  explicit WatchedCache(uid_t owner = geteuid())
      : directory(scratch.path() + "/nvrtc"),
        cache(
            directory, [this](const std::string& message) { warnings.push_back(message); }, owner) {}
  bool warned(const std::string& part) const {
    for (const std::string& warning : warnings) {
      if (warning.find(part) != std::string::npos) return true;
    }
    return false;
  }
  ScratchDir scratch;
  std::string directory;
  std::vector<std::string> warnings;
  DiskCache cache;
};

TEST(DiskCacheTrust, NewDirectoriesArePrivate) {
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  struct stat info;
  ASSERT_EQ(stat(watched.directory.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(watched.cache.entry_path(kKey).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(DiskCacheTrust, ADirectoryOthersMayWriteIsIgnoredWithAWarning) {
  for (const mode_t mode : {mode_t{0777}, mode_t{0770}, mode_t{01777}}) {
    WatchedCache watched;
    ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
    ASSERT_EQ(chmod(watched.directory.c_str(), mode), 0);
    EXPECT_FALSE(watched.cache.load(kKey).has_value()) << "an entry anyone could have forged is code";
    EXPECT_FALSE(watched.cache.store(kKey, sample_module()));
    ASSERT_FALSE(watched.warnings.empty());
    EXPECT_TRUE(watched.warned("is not trusted: others may write it")) << watched.warnings[0];
    EXPECT_TRUE(watched.warned("memory only")) << watched.warnings[0];
    EXPECT_EQ(watched.warnings.size(), 1u) << "the directory is reported once";
  }
}

TEST(DiskCacheTrust, ADirectoryOfAnotherUserIsIgnored) {
  {
    // The owner as a parameter: the check without root.
    WatchedCache watched(geteuid() + 1);
    EXPECT_FALSE(watched.cache.store(kKey, sample_module()));
    EXPECT_TRUE(watched.warned("not by this user")) << (watched.warnings.empty() ? "" : watched.warnings[0]);
  }
  if (!can_act_as_others()) GTEST_SKIP() << "chown needs root";
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  chown_tree(watched.directory, kStrangerUid);
  EXPECT_FALSE(watched.cache.load(kKey).has_value());
  EXPECT_TRUE(watched.warned("owned by uid " + std::to_string(kStrangerUid)));
}

TEST(DiskCacheTrust, AnEntryOfAnotherUserIsIgnoredAndKept) {
  if (!can_act_as_others()) GTEST_SKIP() << "chown needs root";
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  const std::string path = watched.cache.entry_path(kKey);
  ASSERT_EQ(chown(path.c_str(), kStrangerUid, kStrangerUid), 0);
  bool discarded = true;
  EXPECT_FALSE(watched.cache.load(kKey, &discarded).has_value());
  EXPECT_FALSE(discarded) << "an untrusted entry is not a corrupt one";
  EXPECT_TRUE(watched.warned(path + " is not trusted: it is owned by uid " + std::to_string(kStrangerUid)));
  struct stat info;
  EXPECT_EQ(stat(path.c_str(), &info), 0) << "ignored, not deleted";
  // A fresh store replaces it with the user's own entry.
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  EXPECT_TRUE(watched.cache.load(kKey).has_value());
}

TEST(DiskCacheTrust, ALinkAtAnEntryPathIsNotFollowed) {
  WatchedCache elsewhere;
  ASSERT_TRUE(elsewhere.cache.store(kKey, sample_module()));
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  const std::string path = watched.cache.entry_path(kKey);
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.cache.entry_path(kKey).c_str(), path.c_str()), 0);
  EXPECT_FALSE(watched.cache.load(kKey).has_value());
  EXPECT_TRUE(watched.warned(path + " is not trusted: it is a symbolic link"));
}

TEST(DiskCacheTrust, AStoreReplacesALinkInsteadOfWritingThroughIt) {
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));  // creates the directory
  const std::string victim = watched.scratch.path() + "/victim";
  write_file(victim, "precious");
  const std::string path = watched.cache.entry_path(kKey);
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  EXPECT_EQ(read_file(victim), "precious");
  struct stat info;
  ASSERT_EQ(lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
}

TEST(DiskCacheTrust, AFifoAtAnEntryPathDoesNotHang) {
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  const std::string path = watched.cache.entry_path(kKey);
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  FSTITCH_EXPECT_CHILD_PASSES(30, [&] {
    bool discarded = true;
    EXPECT_FALSE(watched.cache.load(kKey, &discarded).has_value());
    EXPECT_FALSE(discarded);
    EXPECT_TRUE(watched.warned(path + " is not trusted: it is a FIFO, not a regular file"));
  });
}

TEST(DiskCacheTrust, AReadOnlyDirectoryIsRead) {
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  const uid_t user = can_act_as_others() ? kStrangerUid : geteuid();
  if (can_act_as_others()) chown_tree(watched.scratch.path(), user);
  ASSERT_EQ(chmod(watched.directory.c_str(), 0500), 0);
  FSTITCH_EXPECT_CHILD_PASSES(30, [&] {
    become_unprivileged(user);
    std::vector<std::string> warnings;
    const DiskCache cache(watched.directory,
                          [&](const std::string& message) { warnings.push_back(message); });
    const std::optional<CompiledModule> loaded = cache.load(kKey);
    ASSERT_TRUE(loaded.has_value()) << (warnings.empty() ? "" : warnings[0]);
    EXPECT_EQ(loaded->ptx, sample_module().ptx);
    EXPECT_FALSE(cache.store("ffffffffffffffffffffffffffffffff", sample_module()));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("memory only"), std::string::npos) << warnings[0];
  });
}

TEST(DiskCacheTrust, AFullDiskFailsTheStoreWithoutLeavingTemporaryFiles) {
  WatchedCache watched;
  ASSERT_TRUE(watched.cache.store(kKey, sample_module()));
  FSTITCH_EXPECT_CHILD_PASSES(30, [&] {
    // Files may not grow past 16 bytes: writes fail with EFBIG, as on a full disk with ENOSPC.
    std::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {16, 16};
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    EXPECT_FALSE(watched.cache.store("ffffffffffffffffffffffffffffffff", sample_module()));
    EXPECT_TRUE(watched.warned("memory only"));
    EXPECT_EQ(directory_entries(watched.directory), std::vector<std::string>{kKey + ".fstk"})
        << "no temporary file remains";
    EXPECT_TRUE(watched.cache.load(kKey).has_value()) << "what is there is still read";
  });
}

}  // namespace
}  // namespace fstitch::jit
