// Helpers shared by the tokenizer tests: paths of the shared vocabularies and
// a generator of random valid UTF-8 text rich in the cases tokenizers get
// wrong (combining marks, CJK, emoji sequences, whitespace runs, lone "\r",
// digits, contractions).
#pragma once

#include <filesystem>
#include <random>
#include <string>

#include "text/utf8.h"

namespace lineage::text::testing {

inline std::string VocabPath(const std::string& name) {
  return std::string(LINEAGE_SHARED_DATA) + "/vocab/ggml-vocab-" + name + ".gguf";
}

inline std::string RandomText(std::mt19937& rng, size_t num_parts) {
  static const char* kPieces[] = {
      " ", "  ", "   ", "\t", "\n", "\n\n", "\r", "\r\n", " \n ", "\u00A0", "\u3000",
      "Hello", "world", "THE", "it's", "We'LL", "you're", "don't", "'s", "a", "Zz",
      "0", "7", "42", "2026", "3.14", "1,000,000", "½",
      ".", ",", "!?", "...", "(", "){", "::", "->", "=>", "\"", "'", "`", "#", "$", "%", "&&", "||", "<|", "|>",
      "é", "e\u0301", "n\u0303", "a\u0308\u0301", "\u0301", "Äpfel", "Cửa Việt", "ﬁ", "Å", "Ω",
      "中文", "我想在apple工作", "東京", "ひらがな", "カタカナ", "한국어", "가\u11A8",
      "🦙", "🚀", "😶\u200D🌫\uFE0F", "👍🏽", "🇫🇷", "✅", "\u200B", "\uFEFF",
      "нещо", "Ελληνικά", "עברית", "العربية", "हिन्दी", "ไทย", "កាន់តែ",
  };
  constexpr size_t kNum = sizeof(kPieces) / sizeof(kPieces[0]);
  std::string s;
  for (size_t i = 0; i < num_parts; ++i) {
    if (rng() % 8 == 0) {  // a random code point from anywhere valid
      char32_t cp;
      do cp = static_cast<char32_t>(rng() % 0x110000);
      while (cp >= 0xD800 && cp <= 0xDFFF);
      AppendUtf8(cp, &s);
    } else {
      s += kPieces[rng() % kNum];
    }
  }
  return s;
}

}  // namespace lineage::text::testing
