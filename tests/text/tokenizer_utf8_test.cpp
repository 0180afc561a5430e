// UTF-8 helpers and the streaming decoder. Expected replacement output
// follows the Unicode "maximal subpart" practice (the same as Python's
// bytes.decode("utf-8", "replace")), written out by hand here.
#include <gtest/gtest.h>

#include <random>

#include "text/stream_decoder.h"
#include "tools/synthetic_vocab.h"
#include "text/utf8.h"

namespace lineage::text {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, DecodeRejectsOverlongSurrogatesAndOutOfRange) {
  char32_t cp = 0;
  EXPECT_EQ(DecodeUtf8("\xC3\xA9", &cp), 2u);
  EXPECT_EQ(cp, 0xE9u);
  EXPECT_EQ(DecodeUtf8("\xF0\x9F\xA6\x99", &cp), 4u);
  EXPECT_EQ(cp, 0x1F999u);
  EXPECT_EQ(DecodeUtf8("\xC0\xAF", &cp), 0u);          // overlong '/'
  EXPECT_EQ(DecodeUtf8("\xE0\x80\xAF", &cp), 0u);      // overlong
  EXPECT_EQ(DecodeUtf8("\xED\xA0\x80", &cp), 0u);      // surrogate D800
  EXPECT_EQ(DecodeUtf8("\xF4\x90\x80\x80", &cp), 0u);  // above U+10FFFF
  EXPECT_EQ(DecodeUtf8("\xE2\x82", &cp), 0u);          // truncated
  EXPECT_EQ(DecodeUtf8("\x80", &cp), 0u);              // lone continuation
}

TEST(Utf8, IncompleteSuffixOnlyCountsCompletableBytes) {
  EXPECT_EQ(IncompleteUtf8Suffix("abc"), 0u);
  EXPECT_EQ(IncompleteUtf8Suffix("ab\xE2"), 1u);
  EXPECT_EQ(IncompleteUtf8Suffix("ab\xE2\x82"), 2u);
  EXPECT_EQ(IncompleteUtf8Suffix("ab\xE2\x82\xAC"), 0u);  // complete euro sign
  EXPECT_EQ(IncompleteUtf8Suffix("\xF0\x9F\xA6"), 3u);
  EXPECT_EQ(IncompleteUtf8Suffix("\xED\xA0"), 0u);  // would be a surrogate: never valid
  EXPECT_EQ(IncompleteUtf8Suffix("\xFF"), 0u);
  EXPECT_EQ(IncompleteUtf8Suffix("\x80\x80"), 0u);
}

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(SanitizeUtf8("ok"), "ok");
  EXPECT_EQ(SanitizeUtf8("a\xFF" "b"), "a" + kFffd + "b");
  EXPECT_EQ(SanitizeUtf8("\xE2\x82" "A"), kFffd + "A");        // one subpart of two bytes
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\xA6"), kFffd);                // truncated at the end
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), kFffd + kFffd);            // C0 is never a lead
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // surrogate: each byte
  EXPECT_EQ(SanitizeUtf8("\x80\x80"), kFffd + kFffd);
}

class StreamDecoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto t = Tokenizer::FromVocabData(MakeSyntheticVocab(3000, VocabFlavour::kQwen35, 5));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tok_ = new Tokenizer(std::move(t).value());
  }
  static void TearDownTestSuite() { delete tok_; }
  static Tokenizer* tok_;
};
Tokenizer* StreamDecoderTest::tok_ = nullptr;

TEST_F(StreamDecoderTest, HoldsBackPartialCharactersAndReassemblesText) {
  const std::string text = "emoji 🦙🚀 and 中文 and e\xCC\x81 done";
  std::vector<TokenId> ids = tok_->Encode(text);
  StreamDecoder d(*tok_);
  std::string out;
  bool held_some = false;
  for (TokenId id : ids) {
    std::string piece = d.Push(id);
    EXPECT_TRUE(IsValidUtf8(piece)) << "chunk after id " << id;
    held_some |= d.pending_bytes() > 0;
    out += piece;
  }
  out += d.Flush();
  EXPECT_EQ(out, tok_->Decode(ids));
  // A 3000-token vocabulary has no token for the emoji: its bytes arrive as
  // several tokens, so the decoder must have held bytes back at some point.
  EXPECT_TRUE(held_some);
}

TEST_F(StreamDecoderTest, RandomByteSplitsOfValidTextComeOutWhole) {
  const std::string text = "naïve café — 東京 🦙 ok";
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    StreamDecoder d(*tok_);
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t n = 1 + rng() % 4;
      std::string piece = d.PushBytes(std::string_view(text).substr(pos, n));
      ASSERT_TRUE(IsValidUtf8(piece));
      out += piece;
      pos += n;
    }
    out += d.Flush();
    ASSERT_EQ(out, text);
  }
}

TEST_F(StreamDecoderTest, InvalidBytesBecomeReplacementCharacters) {
  StreamDecoder d(*tok_);
  std::string out = d.PushBytes("a\xFF");
  out += d.PushBytes("\xE2\x82");  // held
  EXPECT_EQ(d.pending_bytes(), 2u);
  out += d.PushBytes("b");          // the held bytes can no longer complete
  out += d.PushBytes("\xF0\x9F");   // held until the end of the stream
  out += d.Flush();
  EXPECT_EQ(out, "a" + kFffd + kFffd + "b" + kFffd);
}

TEST_F(StreamDecoderTest, ControlTokensCanBeHidden) {
  TokenId im_end = tok_->TextToId("<|im_end|>");
  ASSERT_NE(im_end, kNoToken);
  StreamDecoder shown(*tok_);
  EXPECT_EQ(shown.Push(im_end), "<|im_end|>");
  StreamDecoder hidden(*tok_, DecodeOptions{.render_special = false});
  EXPECT_EQ(hidden.Push(im_end), "");
}

}  // namespace
}  // namespace lineage::text
