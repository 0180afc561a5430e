// `lineage cache ls|show|verify|gc` on a directory written by the tier, with
// a damaged page, an orphan blob and a leftover temporary file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cache/disk/keys.h"
#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun Lineage(const std::string& args) {
  CliRun r;
  FILE* p = popen((std::string(LINEAGE_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Tokens Seq(int64_t n, TokenId first) {
  Tokens t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = first + static_cast<TokenId>(i);
  return t;
}

TEST(DiskCli, ListsVerifiesAndCollectsGarbage) {
  const std::string dir = FreshDir("cli");
  uint64_t damaged_id = 0;
  {
    auto tier = OpenTier(dir, nullptr);
    ASSERT_TRUE(tier->Put(MakeRecord(1, Seq(20, 1), {9}, /*anchor=*/true)).ok());
    ASSERT_TRUE(tier->Put(MakeRecord(2, Seq(30, 500))).ok());
    ASSERT_TRUE(tier->Put(MakeRecord(3, Seq(12, 900))).ok());
    tier->Flush();
    for (const StoredEntryInfo& e : tier->List()) {
      if (e.tokens.size() == 12) damaged_id = e.file_id;
    }
  }
  const CliRun ls = Lineage("cache ls --dir " + dir);
  EXPECT_EQ(ls.code, 0) << ls.out;
  EXPECT_NE(ls.out.find("3 entries"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("      20       2     yes"), std::string::npos) << ls.out;
  const CliRun show = Lineage("cache show --dir " + dir + " " + DirLayout::EntryName(damaged_id).substr(0, 10));
  EXPECT_EQ(show.code, 0) << show.out;
  EXPECT_NE(show.out.find("tokens     12"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("entry_end"), std::string::npos) << show.out;
  EXPECT_EQ(Lineage("cache verify --dir " + dir).code, 0);

  // Damage entry 3's only page; leave an orphan state and a temporary file.
  const KeyChain chain(TestCodec().fingerprint(), 8, Seq(12, 900));
  const std::string page = DirLayout(dir).PagePath(chain.PageKey(1));
  ASSERT_TRUE(fs::exists(page));
  fs::resize_file(page, fs::file_size(page) - 4);
  fs::create_directories(dir + "/states/00");
  fs::copy_file(DirLayout(dir).StatePath(chain.StateKey(12)), dir + "/states/00/" + std::string(32, '0') + ".rst");
  // A temporary file a crashed writer left, and one someone else put there.
  const std::string crashed = DirLayout(dir).TmpPath(DirLayout::EntryName(7), 0x1234);
  { std::ofstream(crashed) << "x"; }
  { std::ofstream(dir + "/tmp/x.tmp") << "not ours"; }

  const CliRun verify = Lineage("cache verify --dir " + dir);
  EXPECT_EQ(verify.code, 2) << verify.out;
  EXPECT_NE(verify.out.find("BAD"), std::string::npos);
  EXPECT_NE(verify.out.find(DirLayout::EntryName(damaged_id)), std::string::npos) << verify.out;

  const CliRun gc = Lineage("cache gc --dir " + dir);
  EXPECT_EQ(gc.code, 0) << gc.out;
  EXPECT_NE(gc.out.find("1 temporary files, 1 damaged entries"), std::string::npos) << gc.out;
  EXPECT_EQ(Lineage("cache verify --dir " + dir).code, 0);
  EXPECT_FALSE(fs::exists(crashed));
  EXPECT_TRUE(fs::exists(dir + "/tmp/x.tmp")) << "a file the tier did not write stays";

  auto tier = OpenTier(dir, nullptr);
  int64_t served = 0;
  ExpectEveryServedEntryVerifies(*tier, &served);
  EXPECT_EQ(served, 2 + 1);
  EXPECT_EQ(Lineage("cache gc --dir " + dir).code, 1) << "refuses while a tier holds the directory";
}

}  // namespace
}  // namespace lineage::cache::disk::testing
