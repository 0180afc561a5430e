#include "text/tiktoken.h"

#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "model/json_field.h"
#include "text/base64.h"
#include "text/byte_level.h"
#include "text/tokenizer_spec.h"

namespace lineage::text {
namespace {

// Ids index a table: bounded so a corrupt file cannot size it (as tokenizer.json).
constexpr int64_t kMaxTokenId = (int64_t{1} << 21) - 1;

// tiktoken's joining of `word` using only ranks below `max_rank`: the parts it ends with.
std::vector<std::string_view> JoinBelow(std::string_view word, int64_t max_rank,
                                        const std::unordered_map<std::string_view, int64_t>& rank) {
  std::vector<std::string_view> parts;
  for (size_t i = 0; i < word.size(); ++i) parts.push_back(word.substr(i, 1));
  while (parts.size() > 1) {
    int64_t best = max_rank;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const std::string_view joined(parts[i].data(), parts[i].size() + parts[i + 1].size());
      auto it = rank.find(joined);
      if (it != rank.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == max_rank) break;
    parts[at] = std::string_view(parts[at].data(), parts[at].size() + parts[at + 1].size());
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  return parts;
}

}  // namespace

std::string MakeTiktokenModel(const std::vector<std::string>& token_bytes) {
  std::string out;
  for (size_t r = 0; r < token_bytes.size(); ++r) out += Base64Encode(token_bytes[r]) + " " + std::to_string(r) + "\n";
  return out;
}

Result<std::vector<std::string>> ParseTiktokenModel(std::string_view text, const std::string& where) {
  std::vector<std::string> tokens;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string at = where + ":" + std::to_string(line_no);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return Corrupt(at + ": expected '<base64> <rank>'");
    auto bytes = Base64Decode(line.substr(0, space));
    if (!bytes || bytes->empty()) return Corrupt(at + ": bad base64 token");
    const std::string_view rank_text = line.substr(space + 1);
    int64_t rank = 0;
    for (char c : rank_text) {
      if (c < '0' || c > '9' || rank > kMaxTokenId) return Corrupt(at + ": bad rank '" + std::string(rank_text) + "'");
      rank = rank * 10 + (c - '0');
    }
    if (rank_text.empty() || rank != static_cast<int64_t>(tokens.size()))
      return Corrupt(at + ": rank " + std::string(rank_text) + " where " + std::to_string(tokens.size()) +
                     " was expected (ranks must run 0, 1, 2, ...)");
    tokens.push_back(std::move(*bytes));
  }
  if (tokens.empty()) return Corrupt(where + ": no tokens");
  return tokens;
}

std::vector<std::string> TiktokenMerges(const std::vector<std::string>& token_bytes) {
  std::unordered_map<std::string_view, int64_t> rank;
  rank.reserve(token_bytes.size());
  for (size_t r = 0; r < token_bytes.size(); ++r) rank.emplace(token_bytes[r], static_cast<int64_t>(r));
  std::vector<std::string> merges;
  for (size_t r = 0; r < token_bytes.size(); ++r) {
    if (token_bytes[r].size() < 2) continue;
    const auto parts = JoinBelow(token_bytes[r], static_cast<int64_t>(r), rank);
    if (parts.size() == 2) merges.push_back(ByteLevelEncode(parts[0]) + " " + ByteLevelEncode(parts[1]));
  }
  return merges;
}

Result<Tokenizer> TokenizerFromTiktoken(std::string_view model_text, std::string_view config_json,
                                        std::string_view chat_template, const std::string& model_path,
                                        const std::string& config_path) {
  LINEAGE_ASSIGN_OR_RETURN(std::vector<std::string> bytes, ParseTiktokenModel(model_text, model_path));
  model::VocabData v;
  v.pre = "kimi-k2";
  v.merges = TiktokenMerges(bytes);
  for (const std::string& b : bytes) v.tokens.push_back(ByteLevelEncode(b));
  v.token_types.assign(v.tokens.size(), model::TokenType::kNormal);
  if (!config_json.empty()) {  // special tokens: added_tokens_decoder {"id": {"content", "special"}}
    LINEAGE_ASSIGN_OR_RETURN(nlohmann::json cfg, model::ParseJsonText(config_json, config_path));
    const model::JsonField root(cfg, config_path);
    LINEAGE_RETURN_IF_ERROR(root["added_tokens_decoder"].ForEachMember(
        [&](const std::string& key, const model::JsonField& t) -> Status {
          int64_t id = 0;
          for (char c : key) {
            if (c < '0' || c > '9' || id > kMaxTokenId) return t.Error("a token id as the key");
            id = id * 10 + (c - '0');
          }
          if (key.empty() || id > kMaxTokenId) return t.Error("a token id as the key");
          LINEAGE_ASSIGN_OR_RETURN(std::string content, t["content"].String());
          LINEAGE_ASSIGN_OR_RETURN(bool special, t["special"].BoolOr(true));
          if (id < static_cast<int64_t>(bytes.size())) return t.Error("an id past the tiktoken.model ranks");
          if (id >= static_cast<int64_t>(v.tokens.size())) {
            v.tokens.resize(static_cast<size_t>(id) + 1);
            v.token_types.resize(static_cast<size_t>(id) + 1, model::TokenType::kUnused);
          }
          v.tokens[id] = std::move(content);
          v.token_types[id] = special ? model::TokenType::kControl : model::TokenType::kUserDefined;
          return Status::Ok();
        },
        /*optional=*/true));
  }
  TokenizerSpec spec = SpecFromVocabData(v);
  spec.chat_template = std::string(chat_template);
  if (!config_json.empty()) LINEAGE_RETURN_IF_ERROR(ApplyTokenizerConfig(config_json, config_path, &spec));
  auto built = Tokenizer::Build(std::move(spec));
  if (!built.ok()) return built.status().With(model_path);
  return built;
}

}  // namespace lineage::text
