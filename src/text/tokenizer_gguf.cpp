// Tokenizer from GGUF metadata (tokenizer.ggml.*): byte-level BPE ("gpt2")
// and SentencePiece-style ("llama"); and from VocabData, the BPE information
// held in memory.
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

std::pair<std::string, std::string> SplitMerge(const std::string& m) {
  // As llama.cpp: the separator is the first space after the first byte, so
  // a left part that is itself a space-like character still works.
  size_t pos = m.find(' ', 1);
  if (pos == std::string::npos) return {m, ""};
  return {m.substr(0, pos), m.substr(pos + 1)};
}

int64_t IdOr(const model::GgufFile& gguf, const char* key, int64_t fallback) {
  auto r = gguf.GetInt(key);
  return r.ok() ? *r : fallback;
}

bool BoolOr(const model::GgufFile& gguf, const char* key, bool fallback) {
  auto r = gguf.GetBool(key);
  return r.ok() ? *r : fallback;
}

// SentencePiece-style vocabulary (tokenizer.ggml.model "llama"): tokens,
// scores, token types; BOS added and a space put before the text unless the
// file says otherwise, as llama.cpp does.
Result<Tokenizer> SpmFromGguf(const model::GgufFile& gguf, const std::string& where) {
  TokenizerSpec spec;
  spec.kind = TokenizerKind::kSpm;
  auto tokens = gguf.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status().With(where);
  spec.tokens = std::move(*tokens);
  if (gguf.Find("tokenizer.ggml.scores")) {
    auto scores = gguf.GetFloatArray("tokenizer.ggml.scores");
    if (!scores.ok()) return scores.status().With(where);
    if (scores->size() != spec.tokens.size()) return Corrupt(where + ": scores and tokens differ in length");
    spec.scores.assign(scores->begin(), scores->end());
  }
  if (gguf.Find("tokenizer.ggml.token_type")) {
    auto types = gguf.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return types.status().With(where);
    if (types->size() != spec.tokens.size()) return Corrupt(where + ": token_type and tokens differ in length");
    for (int64_t t : *types) spec.types.push_back(static_cast<model::TokenType>(t));
  }
  for (size_t i = 0; i < spec.types.size(); ++i) {
    model::TokenType t = spec.types[i];
    if (t == model::TokenType::kControl || t == model::TokenType::kUnknown || t == model::TokenType::kUserDefined) {
      spec.added.push_back({static_cast<int32_t>(i), t != model::TokenType::kUserDefined, false, false});
    }
  }
  spec.bos_id = static_cast<int32_t>(IdOr(gguf, "tokenizer.ggml.bos_token_id", 1));
  spec.eos_id = static_cast<int32_t>(IdOr(gguf, "tokenizer.ggml.eos_token_id", 2));
  spec.eot_id = static_cast<int32_t>(IdOr(gguf, "tokenizer.ggml.eot_token_id", -1));
  spec.pad_id = static_cast<int32_t>(IdOr(gguf, "tokenizer.ggml.padding_token_id", -1));
  spec.add_bos = BoolOr(gguf, "tokenizer.ggml.add_bos_token", true);
  spec.add_prefix_space = BoolOr(gguf, "tokenizer.ggml.add_space_prefix", true);
  auto tmpl = gguf.GetString("tokenizer.chat_template");
  if (tmpl.ok()) spec.chat_template = std::move(*tmpl);
  auto t = Tokenizer::Build(std::move(spec));
  if (!t.ok()) return t.status().With(where);
  return t;
}

}  // namespace

TokenizerSpec SpecFromVocabData(const model::VocabData& vocab) {
  TokenizerSpec spec;
  spec.tokens = vocab.tokens;
  spec.types = vocab.token_types;
  if (spec.types.size() != spec.tokens.size() && spec.types.empty()) {
    spec.types.assign(spec.tokens.size(), model::TokenType::kNormal);
  }
  spec.merges.reserve(vocab.merges.size());
  for (const std::string& m : vocab.merges) spec.merges.push_back(SplitMerge(m));
  for (size_t i = 0; i < spec.types.size() && i < spec.tokens.size(); ++i) {
    model::TokenType t = spec.types[i];
    if (t == model::TokenType::kControl || t == model::TokenType::kUnknown) {
      spec.added.push_back({static_cast<int32_t>(i), /*special=*/true, false, false});
    } else if (t == model::TokenType::kUserDefined) {
      spec.added.push_back({static_cast<int32_t>(i), /*special=*/false, false, false});
    }
  }
  PretokenizerPreset preset = PresetForName(vocab.pre);
  spec.pre_patterns = preset.patterns;
  spec.nfc = preset.nfc;
  spec.ignore_merges = preset.ignore_merges;
  spec.add_bos = vocab.add_bos;
  spec.bos_id = static_cast<int32_t>(vocab.bos_id);
  spec.eos_id = static_cast<int32_t>(vocab.eos_id);
  spec.pad_id = static_cast<int32_t>(vocab.pad_id);
  spec.chat_template = vocab.chat_template;
  return spec;
}

Result<Tokenizer> Tokenizer::FromGguf(const model::GgufFile& gguf) {
  const std::string where = "tokenizer in " + gguf.path();
  auto model = gguf.GetString("tokenizer.ggml.model");
  if (!model.ok()) return model.status().With(where);
  if (*model == "llama") return SpmFromGguf(gguf, where);
  if (*model != "gpt2") return Unsupported(where + ": model '" + *model + "' (only gpt2 and llama)");

  model::VocabData v;
  v.model = *model;
  auto pre = gguf.GetString("tokenizer.ggml.pre");
  v.pre = pre.ok() ? *pre : "default";
  auto tokens = gguf.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status().With(where);
  v.tokens = std::move(*tokens);
  if (gguf.Find("tokenizer.ggml.token_type")) {
    auto types = gguf.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return types.status().With(where);
    if (types->size() != v.tokens.size()) return Corrupt(where + ": token_type and tokens differ in length");
    for (int64_t t : *types) v.token_types.push_back(static_cast<model::TokenType>(t));
  }
  auto merges = gguf.GetStringArray("tokenizer.ggml.merges");
  if (!merges.ok()) return merges.status().With(where);
  v.merges = std::move(*merges);

  v.bos_id = IdOr(gguf, "tokenizer.ggml.bos_token_id", -1);
  v.eos_id = IdOr(gguf, "tokenizer.ggml.eos_token_id", -1);
  v.pad_id = IdOr(gguf, "tokenizer.ggml.padding_token_id", -1);
  v.add_bos = BoolOr(gguf, "tokenizer.ggml.add_bos_token", PresetForName(v.pre).add_bos);
  auto tmpl = gguf.GetString("tokenizer.chat_template");
  if (tmpl.ok()) v.chat_template = std::move(*tmpl);

  TokenizerSpec spec = SpecFromVocabData(v);
  spec.eot_id = static_cast<int32_t>(IdOr(gguf, "tokenizer.ggml.eot_token_id", -1));
  auto t = Build(std::move(spec));
  if (!t.ok()) return t.status().With(where);
  return t;
}

}  // namespace lineage::text
