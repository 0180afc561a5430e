// Helpers shared by the tokenizer tests: paths of the shared vocabularies and
// a generator of random valid UTF-8 text rich in the cases tokenizers get
// wrong (combining marks, CJK, emoji sequences, whitespace runs, lone "\r",
// digits, contractions).
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace lineage::text::testing {

inline std::string VocabPath(const std::string& name) {
  return std::string(LINEAGE_SHARED_DATA) + "/vocab/ggml-vocab-" + name + ".gguf";
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One llama.cpp tokenizer test case: an input and its expected ids.
struct OracleCase {
  std::string text;
  std::vector<int32_t> ids;
};

// Reads NAME.gguf.inp / .out the way llama.cpp's test-tokenizer-0 does:
// inputs separated by "\n__ggml_vocab_test__\n", one line of ids each.
inline std::vector<OracleCase> ReadOracleCases(const std::string& gguf_path) {
  std::string raw = Slurp(gguf_path + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::istringstream out(Slurp(gguf_path + ".out"));
  std::vector<OracleCase> cases;
  std::string line;
  for (size_t i = 0; i < inputs.size() && std::getline(out, line); ++i) {
    OracleCase c{inputs[i], {}};
    std::istringstream ls(line);
    for (long id; ls >> id;) c.ids.push_back(static_cast<int32_t>(id));
    cases.push_back(std::move(c));
  }
  return cases;
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
