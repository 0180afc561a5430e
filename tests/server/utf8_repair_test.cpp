#include <gtest/gtest.h>

#include "server/replies/utf8_repair.h"

namespace lineage::server {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

// The worked example of Unicode 15 §3.9 (Table 3-8, "U+FFFD for maximal
// subparts"): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
TEST(Utf8Repair, MatchesTheUnicodeStandardExample) {
  std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  std::string want = "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d";
  EXPECT_EQ(RepairUtf8(in), want);
}

TEST(Utf8Repair, RejectsOverlongsSurrogatesAndOutOfRange) {
  EXPECT_EQ(RepairUtf8("\xC0\xAF"), kFffd + kFffd);              // overlong '/'
  EXPECT_EQ(RepairUtf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);  // overlong, 3 bytes
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // U+D800
  EXPECT_EQ(RepairUtf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(RepairUtf8("\xFF"), kFffd);
}

TEST(Utf8Repair, KeepsValidTextUnchanged) {
  std::string s = "plain ascii, \xC3\xA9t\xC3\xA9, \xE4\xB8\xAD\xE6\x96\x87, \xF0\x9F\x98\x80, \xF4\x8F\xBF\xBF";
  EXPECT_EQ(RepairUtf8(s), s);
}

TEST(Utf8Repair, TruncatedSequenceAtEndIsOneReplacement) {
  EXPECT_EQ(RepairUtf8("ok\xF0\x9F\x98"), "ok" + kFffd);
}

// The output must not depend on where the stream was cut.
TEST(Utf8Repair, EverySplitGivesTheSameResult) {
  std::string in = "a\xF0\x9F\x98\x80" "b\xE2\x82\xAC\xF1\x80\x80\xE1\x80\xC2" "c\xC3\xA9\xED\xA0\x80\xF4\x8F\xBF\xBF";
  std::string whole = RepairUtf8(in);
  for (size_t i = 0; i <= in.size(); ++i) {
    for (size_t j = i; j <= in.size(); ++j) {
      Utf8Repair r;
      std::string out = r.Feed(in.substr(0, i));
      out += r.Feed(in.substr(i, j - i));
      out += r.Feed(in.substr(j));
      out += r.Finish();
      ASSERT_EQ(out, whole) << "split at " << i << "," << j;
    }
  }
}

TEST(Utf8Repair, HoldsAnIncompleteSequenceUntilItCompletes) {
  Utf8Repair r;
  EXPECT_EQ(r.Feed("x\xE2\x82"), "x");
  EXPECT_EQ(r.Feed("\xAC"), "\xE2\x82\xAC");
  EXPECT_EQ(r.Finish(), "");
}

}  // namespace
}  // namespace lineage::server
