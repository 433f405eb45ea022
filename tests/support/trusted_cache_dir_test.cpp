// The cache trust rules on file status (the owner a parameter, so they hold without root),
// and the folder operations both caches share: private creation, reads that refuse what is
// not a trusted entry, writes that leave nothing behind.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/trusted_cache_dir.hpp"

namespace fstitch {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kUser = 1000;

struct stat status_of(mode_t mode, uid_t owner) {
  struct stat info = {};
  info.st_mode = mode;
  info.st_uid = owner;
  return info;
}

TEST(CacheTrust, ADirectoryMustBeTheUsersAndWritableOnlyByThem) {
  EXPECT_EQ(cache_dir_distrust(status_of(S_IFDIR | 0700, kUser), kUser), std::nullopt);
  EXPECT_EQ(cache_dir_distrust(status_of(S_IFDIR | 0755, kUser), kUser), std::nullopt);
  for (const mode_t shared : {mode_t{0777}, mode_t{0770}, mode_t{0702}, mode_t{01777}}) {
    const std::optional<std::string> why = cache_dir_distrust(status_of(S_IFDIR | shared, kUser), kUser);
    ASSERT_TRUE(why.has_value()) << std::oct << shared;
    EXPECT_NE(why->find("others may write it"), std::string::npos) << *why;
  }
  const std::optional<std::string> foreign = cache_dir_distrust(status_of(S_IFDIR | 0700, 0), kUser);
  ASSERT_TRUE(foreign.has_value());
  EXPECT_EQ(*foreign, "it is owned by uid 0, not by this user (uid 1000)");
  const std::optional<std::string> file = cache_dir_distrust(status_of(S_IFREG | 0700, kUser), kUser);
  ASSERT_TRUE(file.has_value());
  EXPECT_NE(file->find("not a directory"), std::string::npos) << *file;
}

TEST(CacheTrust, AnEntryMustBeARegularFileOfTheUser) {
  EXPECT_EQ(cache_entry_distrust(status_of(S_IFREG | 0600, kUser), kUser), std::nullopt);
  EXPECT_EQ(*cache_entry_distrust(status_of(S_IFIFO | 0600, kUser), kUser),
            "it is a FIFO, not a regular file");
  EXPECT_EQ(*cache_entry_distrust(status_of(S_IFCHR | 0600, kUser), kUser),
            "it is a character device, not a regular file");
  EXPECT_EQ(*cache_entry_distrust(status_of(S_IFDIR | 0700, kUser), kUser),
            "it is a directory, not a regular file");
  EXPECT_EQ(*cache_entry_distrust(status_of(S_IFREG | 0600, kUser + 1), kUser),
            "it is owned by uid 1001, not by this user (uid 1000)");
}

class TrustedCacheDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fstitch-trust-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path root_;
};

TEST_F(TrustedCacheDirTest, CreatesMissingFoldersPrivate) {
  const fs::path nested = root_ / "a" / "b";
  DirOpening opening = TrustedCacheDir::open(nested.string(), MissingDir::kCreate, geteuid());
  ASSERT_EQ(opening.outcome, DirOutcome::kOpened) << opening.problem;
  for (const fs::path& folder : {root_ / "a", nested}) {
    EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all) << folder;
  }
  const DirOpening sub = opening.dir->open_subfolder("host", MissingDir::kCreate);
  ASSERT_EQ(sub.outcome, DirOutcome::kOpened) << sub.problem;
  EXPECT_EQ(fs::status(nested / "host").permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(sub.dir->path(), (nested / "host").string());

  const DirOpening missing =
      TrustedCacheDir::open((root_ / "none").string(), MissingDir::kLeaveMissing, geteuid());
  EXPECT_EQ(missing.outcome, DirOutcome::kMissing);
  EXPECT_FALSE(fs::exists(root_ / "none"));
}

TEST_F(TrustedCacheDirTest, ReadsOnlyTrustedEntries) {
  DirOpening opening = TrustedCacheDir::open(root_.string(), MissingDir::kLeaveMissing, geteuid());
  ASSERT_EQ(opening.outcome, DirOutcome::kOpened) << opening.problem;
  const TrustedCacheDir& dir = *opening.dir;
  std::string problem;
  ASSERT_TRUE(dir.write("entry", "bytes", &problem)) << problem;
  EXPECT_EQ(fs::status(root_ / "entry").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const EntryRead read = dir.read("entry", 100);
  EXPECT_EQ(read.outcome, EntryOutcome::kRead);
  EXPECT_EQ(read.bytes, "bytes");
  EXPECT_EQ(dir.read("entry", 4).outcome, EntryOutcome::kFailed) << "larger than the limit";
  EXPECT_EQ(dir.read("absent", 100).outcome, EntryOutcome::kMissing);

  fs::create_symlink(root_ / "entry", root_ / "link");
  EXPECT_EQ(dir.read("link", 100).outcome, EntryOutcome::kUntrusted);
  ASSERT_EQ(mkfifo((root_ / "fifo").c_str(), 0600), 0);
  const EntryRead fifo = dir.read("fifo", 100);  // returns at once: opened without blocking
  EXPECT_EQ(fifo.outcome, EntryOutcome::kUntrusted);
  EXPECT_EQ(fifo.problem, "it is a FIFO, not a regular file");
  fs::create_directory(root_ / "folder");
  EXPECT_EQ(dir.read("folder", 100).outcome, EntryOutcome::kUntrusted);

  ASSERT_TRUE(dir.remove("link", &problem)) << problem;
  EXPECT_TRUE(fs::exists(root_ / "entry")) << "removing a link leaves its target";
  EXPECT_TRUE(dir.remove("absent", &problem));
}

TEST_F(TrustedCacheDirTest, AFolderThatFailsTheRulesIsNotOpened) {
  ASSERT_EQ(chmod(root_.c_str(), 0777), 0);
  const DirOpening shared = TrustedCacheDir::open(root_.string(), MissingDir::kCreate, geteuid());
  EXPECT_EQ(shared.outcome, DirOutcome::kUntrusted);
  EXPECT_FALSE(shared.dir.has_value());
  EXPECT_EQ(shared.problem, "others may write it (mode 0777)");
  ASSERT_EQ(chmod(root_.c_str(), 0700), 0);
  const DirOpening foreign = TrustedCacheDir::open(root_.string(), MissingDir::kCreate, geteuid() + 1);
  EXPECT_EQ(foreign.outcome, DirOutcome::kUntrusted);
  std::ofstream(root_ / "file") << "in the way";
  const DirOpening file =
      TrustedCacheDir::open((root_ / "file" / "cache").string(), MissingDir::kCreate, geteuid());
  EXPECT_EQ(file.outcome, DirOutcome::kFailed);
  EXPECT_FALSE(file.problem.empty());
}

}  // namespace
}  // namespace fstitch
