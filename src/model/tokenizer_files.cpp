#include "model/tokenizer_files.h"

#include <nlohmann/json.hpp>

namespace lineage::model {
namespace {

using OJson = nlohmann::ordered_json;

bool IsAdded(TokenType t) { return t == TokenType::kControl || t == TokenType::kUserDefined; }

OJson AddedToken(int64_t id, const std::string& content, bool special) {
  return OJson{{"id", id},           {"content", content}, {"single_word", false}, {"lstrip", false},
               {"rstrip", false},    {"normalized", false}, {"special", special}};
}

OJson TokenOrNull(const VocabData& v, int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(v.tokens.size())) return nullptr;
  return v.tokens[id];
}

}  // namespace

const char* PreTokenizerRegex(const std::string& pre) {
  if (pre == "qwen35")
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
           "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
         "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
}

std::string MakeTokenizerJson(const VocabData& v) {
  // model.vocab is written by hand: ordered_json inserts in linear time,
  // which is quadratic for a 248k-token vocabulary; this keeps id order.
  OJson added = OJson::array();
  std::string vocab = "{";
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    TokenType t = id < v.token_types.size() ? v.token_types[id] : TokenType::kNormal;
    if (IsAdded(t)) {
      added.push_back(AddedToken(static_cast<int64_t>(id), v.tokens[id], t == TokenType::kControl));
      continue;
    }
    vocab += (vocab.size() > 1 ? ",\n      " : "\n      ") + OJson(v.tokens[id]).dump() + ": " + std::to_string(id);
  }
  vocab += "\n    }";
  const std::string kVocabSlot = "\"@vocab@\"";
  OJson merges = OJson::array();
  for (const std::string& m : v.merges) merges.push_back(m);
  OJson j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added;
  j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", PreTokenizerRegex(v.pre)}}}, {"behavior", "Isolated"}, {"invert", false}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
  j["post_processor"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", ""},
                {"end_of_word_suffix", ""},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", "@vocab@"},
                {"merges", merges}};
  std::string text = j.dump(2);
  text.replace(text.find(kVocabSlot, text.rfind("\"model\": {")), kVocabSlot.size(), vocab);
  return text + "\n";
}

std::string MakeTokenizerConfigJson(const VocabData& v, int64_t context_length) {
  OJson decoder = OJson::object();
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    TokenType t = id < v.token_types.size() ? v.token_types[id] : TokenType::kNormal;
    if (!IsAdded(t)) continue;
    OJson e = AddedToken(static_cast<int64_t>(id), v.tokens[id], t == TokenType::kControl);
    e.erase("id");
    decoder[std::to_string(id)] = e;
  }
  OJson j;
  j["add_bos_token"] = v.add_bos;
  j["add_prefix_space"] = false;
  j["added_tokens_decoder"] = decoder;
  j["bos_token"] = TokenOrNull(v, v.bos_id);
  if (!v.chat_template.empty()) j["chat_template"] = v.chat_template;
  j["clean_up_tokenization_spaces"] = false;
  j["eos_token"] = TokenOrNull(v, v.eos_id);
  j["errors"] = "replace";
  j["model_max_length"] = context_length;
  j["pad_token"] = TokenOrNull(v, v.pad_id);
  j["split_special_tokens"] = false;
  if (v.tiktoken_model.empty()) {
    j["tokenizer_class"] = "Qwen2Tokenizer";
  } else {  // Kimi: tokenization_kimi.py reads tiktoken.model
    j["tokenizer_class"] = "TikTokenTokenizer";
    j["auto_map"] = OJson::object();
    j["auto_map"]["AutoTokenizer"] = OJson::array({"tokenization_kimi.TikTokenTokenizer", nullptr});
  }
  j["unk_token"] = nullptr;
  return j.dump(2) + "\n";
}

}  // namespace lineage::model
