// The disk tier touches only what it writes: a directory that holds anything
// else is refused before anything in it is read or removed, a folder of the
// cache that is a symbolic link is never followed, temporary files are
// removed only under the names the tier gives them, and the ownership lock
// lives on the directory itself, so deleting a file cannot hand it to a
// second server.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

namespace fs = std::filesystem;

Result<std::unique_ptr<FileDiskTier>> TryOpen(const std::string& dir, bool shared = false) {
  FileDiskTierOptions o;
  o.dir = dir;
  o.shared = shared;
  return FileDiskTier::Open(o, std::make_shared<TestCodec>());
}

int LineageExit(const std::string& args, std::string* out) {
  FILE* p = popen((std::string(LINEAGE_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) *out += buf;
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(DiskDirSafety, ADirectoryWithOtherFilesIsRefusedAndKeptWhole) {
  const std::string dir = FreshDir("safety_home");
  { std::ofstream(dir + "/important.doc") << "mine"; }
  fs::create_directories(dir + "/tmp");
  { std::ofstream(dir + "/tmp/notes.txt") << "mine too"; }
  auto tier = TryOpen(dir);
  ASSERT_FALSE(tier.ok());
  EXPECT_NE(tier.status().message().find("is not a cache directory: it holds 'important.doc'"), std::string::npos)
      << tier.status().ToString();
  std::string out;
  EXPECT_EQ(LineageExit("cache gc --dir " + dir, &out), 1) << out;
  EXPECT_NE(out.find("is not a cache directory"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir + "/important.doc"));
  EXPECT_TRUE(fs::exists(dir + "/tmp/notes.txt"));
}

TEST(DiskDirSafety, ALinkedTmpFolderIsNeverFollowed) {
  const std::string dir = FreshDir("safety_link"), victim = FreshDir("safety_victim");
  { auto t = TryOpen(dir); ASSERT_TRUE(t.ok()) << t.status().ToString(); }  // a real cache directory
  { std::ofstream(victim + "/important.doc") << "mine"; }
  // Named as a crashed writer's file would be: only the link stands between it and removal.
  const std::string bait = DirLayout::EntryName(5) + ".0000000000000abc.tmp";
  { std::ofstream(victim + "/" + bait) << "mine"; }
  fs::remove_all(dir + "/tmp");
  fs::create_directory_symlink(victim, dir + "/tmp");
  auto tier = TryOpen(dir);
  ASSERT_FALSE(tier.ok());
  EXPECT_NE(tier.status().message().find("tmp is a symbolic link"), std::string::npos) << tier.status().ToString();
  std::string out;
  EXPECT_EQ(LineageExit("cache gc --dir " + dir, &out), 1) << out;
  EXPECT_TRUE(fs::exists(victim + "/important.doc"));
  EXPECT_TRUE(fs::exists(victim + "/" + bait));
}

TEST(DiskDirSafety, OnlyTheTiersOwnTemporaryNamesAreRemoved) {
  const std::string dir = FreshDir("safety_tmp");
  { auto t = TryOpen(dir); ASSERT_TRUE(t.ok()); }
  const std::string ours = DirLayout(dir).TmpPath(DirLayout::EntryName(3), 0x77);
  { std::ofstream(ours) << "partial"; }
  for (const char* name : {"x.tmp", "notes", "0123.tmp", "0123456789abcdef.ent.0000000000000ABC.tmp"})
    std::ofstream(dir + "/tmp/" + name) << "not ours";
  // A link named as ours: unlinked or not, its target is never touched.
  const std::string target = FreshDir("safety_target") + "/kept";
  { std::ofstream(target) << "kept"; }
  fs::create_symlink(target, DirLayout(dir).TmpPath(DirLayout::EntryName(4), 0x78));
  { auto t = TryOpen(dir); ASSERT_TRUE(t.ok()) << t.status().ToString(); }
  EXPECT_FALSE(fs::exists(ours));
  for (const char* name : {"x.tmp", "notes", "0123.tmp", "0123456789abcdef.ent.0000000000000ABC.tmp"})
    EXPECT_TRUE(fs::exists(dir + "/tmp/" + name)) << name;
  EXPECT_TRUE(fs::exists(target));
}

TEST(DiskDirSafety, TheLockLivesOnTheDirectoryNotOnAFile) {
  const std::string dir = FreshDir("safety_lock");
  auto first = TryOpen(dir);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(fs::exists(dir + "/LOCK")) << "no file to delete";
  fs::remove(dir + "/LOCK");
  fs::remove(dir + "/COLLECT");
  auto second = TryOpen(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted) << second.status().ToString();
  std::string out;
  EXPECT_EQ(LineageExit("cache gc --dir " + dir, &out), 1) << "refuses while a tier holds the directory: " << out;
}

TEST(DiskDirSafety, GcSkipsAFolderNamedLikeAnEntryAndSaysSo) {
  const std::string dir = FreshDir("safety_gc_dir");
  { auto t = TryOpen(dir); ASSERT_TRUE(t.ok()); }
  const std::string folder = DirLayout(dir).EntryPath(9);
  fs::create_directories(folder);
  std::string out;
  EXPECT_EQ(LineageExit("cache gc --dir " + dir, &out), 0) << out;
  EXPECT_NE(out.find("skipping"), std::string::npos) << out;
  EXPECT_EQ(out.find("removing " + folder), std::string::npos) << out;
  EXPECT_TRUE(fs::is_directory(folder));
}

}  // namespace
}  // namespace lineage::cache::disk::testing
