// The on-disk entry format and the disk cache, with hand-made modules (no NVRTC needed).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "jit/disk_cache.hpp"
#include "jit_test_support.hpp"

namespace fstitch::jit {
namespace {

using testing::directory_entries;
using testing::read_file;
using testing::sample_module;
using testing::ScratchDir;
using testing::write_file;

const std::string kKey = "00112233445566778899aabbccddeeff";

void expect_same(const CompiledModule& actual, const CompiledModule& expected) {
  EXPECT_EQ(actual.ptx, expected.ptx);
  EXPECT_EQ(actual.cubin, expected.cubin);
  EXPECT_EQ(actual.log, expected.log);
}

TEST(CacheEntry, HeaderLayoutIsAsDocumented) {
  const CompiledModule module = sample_module();
  const std::string entry = encode_cache_entry(kKey, module);
  ASSERT_EQ(entry.size(), kCacheHeaderSize + module.ptx.size() + module.cubin.size() + module.log.size());
  EXPECT_EQ(entry.substr(0, 8), "FSTKCACH");
  EXPECT_EQ(static_cast<unsigned char>(entry[8]), kCacheFormatVersion);
  EXPECT_EQ(static_cast<unsigned char>(entry[12]), kCacheHeaderSize);
  EXPECT_EQ(entry.substr(16, 32), kKey);
  EXPECT_EQ(static_cast<unsigned char>(entry[48]), module.ptx.size());
  EXPECT_EQ(static_cast<unsigned char>(entry[56]), module.cubin.size());
  EXPECT_EQ(static_cast<unsigned char>(entry[64]), module.log.size());
  EXPECT_EQ(entry.substr(kCacheHeaderSize, module.ptx.size()), module.ptx);
}

TEST(CacheEntry, RoundTripsAndReparsesTheResources) {
  const CompiledModule module = sample_module();
  std::string problem;
  const auto decoded = decode_cache_entry(encode_cache_entry(kKey, module), kKey, &problem);
  ASSERT_TRUE(decoded.has_value()) << problem;
  expect_same(*decoded, module);
  ASSERT_EQ(decoded->resources.size(), 1u);
  EXPECT_EQ(decoded->resources[0].registers, 4);
}

TEST(CacheEntry, EmptySectionsRoundTrip) {
  CompiledModule module;
  module.cubin = {0};
  std::string problem;
  const auto decoded = decode_cache_entry(encode_cache_entry(kKey, module), kKey, &problem);
  ASSERT_TRUE(decoded.has_value()) << problem;
  expect_same(*decoded, module);
}

TEST(CacheEntry, EveryFlippedByteIsDetected) {
  const std::string entry = encode_cache_entry(kKey, sample_module());
  for (std::size_t position = 0; position < entry.size(); ++position) {
    std::string corrupt = entry;
    corrupt[position] = static_cast<char>(corrupt[position] ^ 0x01);
    std::string problem;
    EXPECT_FALSE(decode_cache_entry(corrupt, kKey, &problem).has_value()) << "byte " << position;
    EXPECT_FALSE(problem.empty()) << "byte " << position;
  }
}

TEST(CacheEntry, EveryTruncationAndExtensionIsDetected) {
  const std::string entry = encode_cache_entry(kKey, sample_module());
  for (std::size_t length = 0; length < entry.size(); ++length) {
    std::string problem;
    EXPECT_FALSE(decode_cache_entry(entry.substr(0, length), kKey, &problem).has_value())
        << "length " << length;
  }
  std::string problem;
  EXPECT_FALSE(decode_cache_entry(entry + "x", kKey, &problem).has_value());
  EXPECT_NE(problem.find("section lengths"), std::string::npos) << problem;
}

TEST(CacheEntry, AnEntryForAnotherKeyIsRejected) {
  std::string problem;
  EXPECT_FALSE(decode_cache_entry(encode_cache_entry(kKey, sample_module()),
                                  "ffffffffffffffffffffffffffffffff", &problem)
                   .has_value());
  EXPECT_EQ(problem, "written for another key");
}

TEST(DiskCache, StoresAtomicallyAndLoads) {
  ScratchDir scratch;
  const std::string directory = scratch.path() + "/nested/cache";  // created with parents
  DiskCache cache(directory, nullptr);
  EXPECT_FALSE(cache.load(kKey).has_value());
  ASSERT_TRUE(cache.store(kKey, sample_module()));
  EXPECT_EQ(directory_entries(directory), std::vector<std::string>{kKey + ".fstk"})
      << "no temporary files remain";
  EXPECT_EQ(cache.entry_path(kKey), directory + "/" + kKey + ".fstk");

  const auto loaded = cache.load(kKey);
  ASSERT_TRUE(loaded.has_value());
  expect_same(*loaded, sample_module());

  // Storing again replaces the entry.
  CompiledModule changed = sample_module();
  changed.log = "other log";
  ASSERT_TRUE(cache.store(kKey, changed));
  EXPECT_EQ(cache.load(kKey)->log, "other log");
}

TEST(DiskCache, ACorruptEntryIsDeletedAndReported) {
  ScratchDir scratch;
  std::vector<std::string> warnings;
  DiskCache cache(scratch.path(), [&](const std::string& message) { warnings.push_back(message); });
  ASSERT_TRUE(cache.store(kKey, sample_module()));
  const std::string path = cache.entry_path(kKey);
  std::string bytes = read_file(path);
  bytes[bytes.size() - 3] = static_cast<char>(bytes[bytes.size() - 3] ^ 0x40);
  write_file(path, bytes);

  bool discarded = false;
  EXPECT_FALSE(cache.load(kKey, &discarded).has_value());
  EXPECT_TRUE(discarded);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("checksum mismatch"), std::string::npos) << warnings[0];
  struct stat info;
  EXPECT_NE(stat(path.c_str(), &info), 0) << "the corrupt file is gone";

  // A missing entry is a quiet miss.
  EXPECT_FALSE(cache.load(kKey, &discarded).has_value());
  EXPECT_FALSE(discarded);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(DiskCache, AnUncreatableDirectoryFailsTheStoreWithAWarning) {
  ScratchDir scratch;
  write_file(scratch.path() + "/plain-file", "not a directory");
  std::vector<std::string> warnings;
  DiskCache cache(scratch.path() + "/plain-file/cache",
                  [&](const std::string& message) { warnings.push_back(message); });
  EXPECT_FALSE(cache.load(kKey).has_value());
  EXPECT_FALSE(cache.store(kKey, sample_module()));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("memory only"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace fstitch::jit
