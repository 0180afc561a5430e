// Tokenizer from a Hugging Face tokenizer.json (model BPE, byte-level) and
// the optional tokenizer_config.json beside it.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/json_field.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

using nlohmann::json;
using model::JsonField;

// Sequences of normalizers / pre-tokenizers / decoders nest; real files use
// one level, and a bound keeps a hostile file from exhausting the stack.
constexpr int kMaxSequenceDepth = 8;

Status UnsupportedField(const JsonField& f, const std::string& what) {
  return Unsupported(f.file() + ": field '" + f.path() + "': " + what + " is not supported");
}

Status CheckDepth(const JsonField& f, int depth) {
  if (depth > kMaxSequenceDepth) return f.Error("at most " + std::to_string(kMaxSequenceDepth) + " nested Sequences");
  return Status::Ok();
}

Status AddNormalizer(const JsonField& n, TokenizerSpec* spec, int depth = 0) {
  if (!n.present()) return Status::Ok();
  LINEAGE_RETURN_IF_ERROR(CheckDepth(n, depth));
  LINEAGE_ASSIGN_OR_RETURN(std::string type, n["type"].String());
  if (type == "NFC") {
    spec->nfc = true;
  } else if (type == "Sequence") {
    return n["normalizers"].ForEachItem([&](const JsonField& sub) { return AddNormalizer(sub, spec, depth + 1); });
  } else {
    return UnsupportedField(n["type"], "normalizer '" + type + "'");
  }
  return Status::Ok();
}

// PCRE2 quoting of a literal Split pattern.
std::string QuoteLiteral(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

Status AddPreTokenizer(const JsonField& p, TokenizerSpec* spec, int depth = 0) {
  if (!p.present()) return Status::Ok();
  LINEAGE_RETURN_IF_ERROR(CheckDepth(p, depth));
  LINEAGE_ASSIGN_OR_RETURN(std::string type, p["type"].String());
  if (type == "Sequence") {
    return p["pretokenizers"].ForEachItem([&](const JsonField& sub) { return AddPreTokenizer(sub, spec, depth + 1); });
  } else if (type == "Split") {
    LINEAGE_ASSIGN_OR_RETURN(std::string behavior, p["behavior"].StringOr("Isolated"));
    if (behavior != "Isolated") return UnsupportedField(p["behavior"], "Split behavior '" + behavior + "'");
    LINEAGE_ASSIGN_OR_RETURN(bool invert, p["invert"].BoolOr(false));
    if (invert) return UnsupportedField(p["invert"], "an inverted Split");
    const JsonField pat = p["pattern"];
    if (pat["Regex"].present()) {
      LINEAGE_ASSIGN_OR_RETURN(std::string regex, pat["Regex"].String());
      spec->pre_patterns.push_back(regex);
    } else if (pat["String"].present()) {
      LINEAGE_ASSIGN_OR_RETURN(std::string literal, pat["String"].String());
      spec->pre_patterns.push_back(QuoteLiteral(literal));
    } else {
      return pat.Error("an object with a Regex or String");
    }
  } else if (type == "ByteLevel") {
    LINEAGE_ASSIGN_OR_RETURN(bool prefix, p["add_prefix_space"].BoolOr(false));
    if (prefix) spec->add_prefix_space = true;
    LINEAGE_ASSIGN_OR_RETURN(bool use_regex, p["use_regex"].BoolOr(true));
    if (use_regex) spec->pre_patterns.push_back(Gpt2Pattern());
  } else if (type == "Digits") {
    LINEAGE_ASSIGN_OR_RETURN(bool each, p["individual_digits"].BoolOr(false));
    spec->pre_patterns.push_back(each ? "\\p{N}" : "\\p{N}+");
  } else {
    return UnsupportedField(p["type"], "pre_tokenizer '" + type + "'");
  }
  return Status::Ok();
}

Status CheckDecoder(const JsonField& d, int depth = 0) {
  if (!d.present()) return Status::Ok();
  LINEAGE_RETURN_IF_ERROR(CheckDepth(d, depth));
  LINEAGE_ASSIGN_OR_RETURN(std::string type, d["type"].String());
  if (type == "ByteLevel") return Status::Ok();
  if (type == "Sequence") {
    return d["decoders"].ForEachItem([&](const JsonField& sub) { return CheckDecoder(sub, depth + 1); });
  }
  return UnsupportedField(d["type"], "decoder '" + type + "'");
}

// A token named in tokenizer_config.json: a string, {"content": ...} or null.
Result<std::string> TokenName(const JsonField& v) {
  if (!v.present()) return std::string();
  if (v.is_object()) return v["content"].String();
  if (!v.is_string()) return v.Error("a string, an object with content, or null");
  return v.String();
}

// Vocabulary, added tokens and merges of tokenizer.json's BPE model.
Status ReadBpeModel(const JsonField& j, TokenizerSpec* spec) {
  const JsonField model = j["model"];
  if (!model.is_object()) return model.Error("an object");
  LINEAGE_ASSIGN_OR_RETURN(std::string type, model["type"].StringOr("BPE"));
  if (type != "BPE") return UnsupportedField(model["type"], "tokenizer model '" + type + "' (only BPE)");
  LINEAGE_ASSIGN_OR_RETURN(bool byte_fallback, model["byte_fallback"].BoolOr(false));
  if (byte_fallback) return UnsupportedField(model["byte_fallback"], "BPE with byte_fallback");
  LINEAGE_ASSIGN_OR_RETURN(spec->ignore_merges, model["ignore_merges"].BoolOr(false));

  // Ids index a table: bounded so a corrupt id cannot size it.
  constexpr int64_t kMaxTokenId = (int64_t{1} << 21) - 1;
  std::vector<std::pair<std::string, int64_t>> vocab;
  LINEAGE_RETURN_IF_ERROR(model["vocab"].ForEachMember([&](const std::string& text, const JsonField& id) -> Status {
    LINEAGE_ASSIGN_OR_RETURN(int64_t i, id.Int(0, kMaxTokenId));
    vocab.emplace_back(text, i);
    return Status::Ok();
  }));
  struct Added {
    int64_t id;
    std::string content;
    bool special, lstrip, rstrip;
  };
  std::vector<Added> added;
  LINEAGE_RETURN_IF_ERROR(j["added_tokens"].ForEachItem(
      [&](const JsonField& a) -> Status {
        Added t;
        LINEAGE_ASSIGN_OR_RETURN(t.id, a["id"].Int(0, kMaxTokenId));
        LINEAGE_ASSIGN_OR_RETURN(t.content, a["content"].String());
        LINEAGE_ASSIGN_OR_RETURN(t.special, a["special"].BoolOr(false));
        LINEAGE_ASSIGN_OR_RETURN(t.lstrip, a["lstrip"].BoolOr(false));
        LINEAGE_ASSIGN_OR_RETURN(t.rstrip, a["rstrip"].BoolOr(false));
        added.push_back(std::move(t));
        return Status::Ok();
      },
      /*optional=*/true));
  int64_t max_id = -1;
  for (const auto& [text, id] : vocab) max_id = std::max(max_id, id);
  for (const Added& a : added) max_id = std::max(max_id, a.id);
  if (max_id < 0) return model["vocab"].Error("a non-empty vocabulary");
  spec->tokens.assign(max_id + 1, "");
  spec->types.assign(max_id + 1, model::TokenType::kUnused);  // holes stay unused
  for (auto& [text, id] : vocab) {
    spec->tokens[id] = std::move(text);
    spec->types[id] = model::TokenType::kNormal;
  }
  for (Added& a : added) {
    spec->tokens[a.id] = std::move(a.content);
    spec->types[a.id] = a.special ? model::TokenType::kControl : model::TokenType::kUserDefined;
    spec->added.push_back({static_cast<int32_t>(a.id), a.special, a.lstrip, a.rstrip});
  }
  return model["merges"].ForEachItem(
      [&](const JsonField& m) -> Status {
        const std::string expected = "a merge \"a b\" or [a, b]";
        if (m.is_string()) {
          const std::string s = m.raw()->get<std::string>();
          const size_t pos = s.size() > 1 ? s.find(' ', 1) : std::string::npos;
          if (pos == std::string::npos) return m.Error(expected);
          spec->merges.emplace_back(s.substr(0, pos), s.substr(pos + 1));
        } else if (m.is_array() && m.raw()->size() == 2 && (*m.raw())[0].is_string() && (*m.raw())[1].is_string()) {
          spec->merges.emplace_back((*m.raw())[0].get<std::string>(), (*m.raw())[1].get<std::string>());
        } else {
          return m.Error(expected);
        }
        return Status::Ok();
      },
      /*optional=*/true);
}

int32_t FindId(const TokenizerSpec& spec, const std::string& text) {
  if (text.empty()) return -1;
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    if (spec.tokens[i] == text) return static_cast<int32_t>(i);
  }
  return -1;
}

// A post-processor template that starts with a special token adds BOS
// (Llama 3 nests it in a Sequence after ByteLevel).
Status ReadPostProcessor(const JsonField& post, TokenizerSpec* spec) {
  auto one = [&](const JsonField& p) -> Status {
    if (!p.is_object()) return p.Error("an object");
    LINEAGE_ASSIGN_OR_RETURN(std::string type, p["type"].StringOr(""));
    if (type != "TemplateProcessing") return Status::Ok();
    const JsonField special = p["single"].Item(0)["SpecialToken"];
    if (!special.present()) return Status::Ok();
    LINEAGE_ASSIGN_OR_RETURN(std::string id, special["id"].StringOr(""));
    spec->bos_id = FindId(*spec, id);
    spec->add_bos = spec->bos_id >= 0;
    return Status::Ok();
  };
  if (!post.present()) return Status::Ok();
  if (!post.is_object()) return post.Error("an object");
  LINEAGE_ASSIGN_OR_RETURN(std::string type, post["type"].StringOr(""));
  if (type == "Sequence") return post["processors"].ForEachItem(one, /*optional=*/true);
  return one(post);
}

Status ReadTokenizerConfig(const JsonField& cfg, TokenizerSpec* spec) {
  if (!cfg.is_object()) return cfg.Error("a JSON object");
  struct Named {
    const char* key;
    int32_t* id;
  };
  for (Named n : {Named{"bos_token", &spec->bos_id}, Named{"eos_token", &spec->eos_id}, Named{"pad_token", &spec->pad_id}}) {
    LINEAGE_ASSIGN_OR_RETURN(std::string name, TokenName(cfg[n.key]));
    if (int32_t id = FindId(*spec, name); id >= 0) *n.id = id;
  }
  LINEAGE_ASSIGN_OR_RETURN(spec->add_bos, cfg["add_bos_token"].BoolOr(spec->add_bos));
  const JsonField t = cfg["chat_template"];
  if (!t.present()) return Status::Ok();
  if (t.is_string()) {
    LINEAGE_ASSIGN_OR_RETURN(spec->chat_template, t.String());
    return Status::Ok();
  }
  if (!t.is_array()) return t.Error("a string or a list of {name, template}");
  return t.ForEachItem([&](const JsonField& e) -> Status {  // named templates: take "default"
    LINEAGE_ASSIGN_OR_RETURN(std::string name, e["name"].String());
    if (name == "default") {
      LINEAGE_ASSIGN_OR_RETURN(spec->chat_template, e["template"].String());
    }
    return Status::Ok();
  });
}

Result<TokenizerSpec> ParseSpec(std::string_view tokenizer_json, std::string_view config_json,
                                const std::string& tokenizer_path, const std::string& config_path) {
  LINEAGE_ASSIGN_OR_RETURN(json doc, model::ParseJsonText(tokenizer_json, tokenizer_path));
  const JsonField j(doc, tokenizer_path);
  if (!j.is_object()) return j.Error("a JSON object");
  TokenizerSpec spec;
  LINEAGE_RETURN_IF_ERROR(ReadBpeModel(j, &spec));
  LINEAGE_RETURN_IF_ERROR(AddNormalizer(j["normalizer"], &spec));
  LINEAGE_RETURN_IF_ERROR(AddPreTokenizer(j["pre_tokenizer"], &spec));
  LINEAGE_RETURN_IF_ERROR(CheckDecoder(j["decoder"]));
  LINEAGE_RETURN_IF_ERROR(ReadPostProcessor(j["post_processor"], &spec));
  if (!config_json.empty()) LINEAGE_RETURN_IF_ERROR(ApplyTokenizerConfig(config_json, config_path, &spec));
  return spec;
}

}  // namespace

Status ApplyTokenizerConfig(std::string_view config_json, const std::string& config_path, TokenizerSpec* spec) {
  LINEAGE_ASSIGN_OR_RETURN(json cfg, model::ParseJsonText(config_json, config_path));
  return ReadTokenizerConfig(JsonField(cfg, config_path), spec);
}

Result<Tokenizer> Tokenizer::FromHfJson(std::string_view tokenizer_json, std::string_view config_json,
                                        const std::string& tokenizer_path, const std::string& config_path) {
  Result<TokenizerSpec> spec = ParseSpec(tokenizer_json, config_json, tokenizer_path, config_path);
  if (!spec.ok()) return spec.status();
  auto built = Build(std::move(spec).value());
  if (!built.ok()) return built.status().With(tokenizer_path);
  return built;
}

}  // namespace lineage::text
