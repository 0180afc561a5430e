// The pre-tokenizer regexes behind each tokenizer.ggml.pre name, as llama.cpp
// assigns them (llama-vocab.cpp, llm_tokenizer_bpe). Where llama.cpp spells
// a case-insensitive group out as '[sS]|..., the original (?i:...) form is
// used: PCRE2 supports it and it matches the same strings.
#include <string>
#include <string_view>
#include <vector>

#include "text/pretokenizer.h"

namespace lineage::text {
namespace {

const std::string kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

const std::string kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kQwen35 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kSeedCoder =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kDeepseekV3 =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Kimi K2 (tokenization_kimi.py's tiktoken pattern; llama.cpp's "kimi-k2"
// runs it in a hand-written splitter): Han runs split off first, and the
// letter classes of the GPT-4o-style words exclude Han. The original's class
// intersections ([...&&[^\p{Han}]]) are written as a negative look-ahead,
// which PCRE2 supports and which matches the same characters.
const std::string kKimiK2 =
    "\\p{Han}+|"
    "[^\\r\\n\\p{L}\\p{N}]?(?:(?!\\p{Han})[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}])*"
    "(?:(?!\\p{Han})[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}])+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "[^\\r\\n\\p{L}\\p{N}]?(?:(?!\\p{Han})[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}])+"
    "(?:(?!\\p{Han})[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}])*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

bool In(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

const std::string& Gpt2Pattern() { return kGpt2; }

PretokenizerPreset PresetForName(std::string_view name, bool* known) {
  PretokenizerPreset p;
  if (known) *known = true;
  if (In(name, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"})) {
    p.patterns = {kLlama3};
    p.ignore_merges = true;
    p.add_bos = true;
  } else if (In(name, {"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"})) {
    p.patterns = {kLlama3};
  } else if (In(name, {"qwen2", "deepseek-r1-qwen"})) {
    p.patterns = {kQwen2};
    p.nfc = true;
  } else if (In(name, {"qwen35"})) {
    p.patterns = {kQwen35};
    p.nfc = true;
  } else if (In(name, {"stablelm2", "megrez", "hunyuan", "kormo", "grok-2"})) {
    p.patterns = {kQwen2};
  } else if (In(name, {"deepseek-coder"})) {
    p.patterns = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"};
  } else if (In(name, {"deepseek-v3", "hunyuan-dense"})) {
    p.patterns = {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", kDeepseekV3};
  } else if (In(name, {"falcon"})) {
    p.patterns = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
  } else if (In(name, {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"})) {
    p.patterns = {"\\p{N}", kGpt2};
  } else if (In(name, {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                       "mellum", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "trillion",
                       "granite-docling", "exaone4"})) {
    p.patterns = {kGpt2};
  } else if (In(name, {"gpt-4o", "llama4", "minimax-m2"})) {
    p.patterns = {kGpt4o};
  } else if (In(name, {"kimi-k2"})) {
    p.patterns = {kKimiK2};
    p.ignore_merges = true;  // tiktoken takes a word that is itself a token whole
  } else if (In(name, {"tekken"})) {
    p.patterns = {kTekken};
    p.ignore_merges = true;
    p.add_bos = true;
  } else if (In(name, {"seed-coder"})) {
    p.patterns = {kSeedCoder};
  } else {
    if (known) *known = name == "default";
    p.patterns = {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};
  }
  return p;
}

}  // namespace lineage::text
