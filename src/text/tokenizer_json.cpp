// Tokenizer from a Hugging Face tokenizer.json (model BPE, byte-level) and
// the optional tokenizer_config.json beside it.
#include <nlohmann/json.hpp>

#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

using nlohmann::json;

Status AddNormalizer(const json& n, TokenizerSpec* spec) {
  if (n.is_null()) return Status::Ok();
  std::string type = n.value("type", "");
  if (type == "NFC") {
    spec->nfc = true;
  } else if (type == "Sequence") {
    for (const json& sub : n.at("normalizers")) LINEAGE_RETURN_IF_ERROR(AddNormalizer(sub, spec));
  } else {
    return Unsupported("normalizer '" + type + "'");
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

Status AddPreTokenizer(const json& p, TokenizerSpec* spec) {
  if (p.is_null()) return Status::Ok();
  std::string type = p.value("type", "");
  if (type == "Sequence") {
    for (const json& sub : p.at("pretokenizers")) LINEAGE_RETURN_IF_ERROR(AddPreTokenizer(sub, spec));
  } else if (type == "Split") {
    std::string behavior = p.value("behavior", "Isolated");
    if (behavior != "Isolated") return Unsupported("Split behavior '" + behavior + "'");
    if (p.value("invert", false)) return Unsupported("inverted Split");
    const json& pat = p.at("pattern");
    if (pat.contains("Regex")) {
      spec->pre_patterns.push_back(pat.at("Regex").get<std::string>());
    } else if (pat.contains("String")) {
      spec->pre_patterns.push_back(QuoteLiteral(pat.at("String").get<std::string>()));
    } else {
      return InvalidArgument("Split pattern has neither Regex nor String");
    }
  } else if (type == "ByteLevel") {
    if (p.value("add_prefix_space", false)) spec->add_prefix_space = true;
    if (p.value("use_regex", true)) spec->pre_patterns.push_back(Gpt2Pattern());
  } else if (type == "Digits") {
    spec->pre_patterns.push_back(p.value("individual_digits", false) ? "\\p{N}" : "\\p{N}+");
  } else {
    return Unsupported("pre_tokenizer '" + type + "'");
  }
  return Status::Ok();
}

Status CheckDecoder(const json& d) {
  if (d.is_null()) return Status::Ok();
  std::string type = d.value("type", "");
  if (type == "ByteLevel") return Status::Ok();
  if (type == "Sequence") {
    for (const json& sub : d.at("decoders")) LINEAGE_RETURN_IF_ERROR(CheckDecoder(sub));
    return Status::Ok();
  }
  return Unsupported("decoder '" + type + "'");
}

// A token named in tokenizer_config.json: a string or {"content": ...}.
std::string TokenName(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return "";
  const json& v = cfg.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v.at("content").get<std::string>();
  return "";
}

Result<TokenizerSpec> ParseSpec(std::string_view tokenizer_json, std::string_view config_json) {
  json j = json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("tokenizer.json is not a JSON object");
  TokenizerSpec spec;
  const json& model = j.at("model");
  std::string type = model.value("type", "BPE");
  if (type != "BPE") return Unsupported("tokenizer model '" + type + "' (only BPE)");
  if (model.value("byte_fallback", false)) return Unsupported("BPE with byte_fallback");
  spec.ignore_merges = model.value("ignore_merges", false);

  int64_t max_id = -1;
  for (const auto& [text, id] : model.at("vocab").items()) max_id = std::max<int64_t>(max_id, id.get<int64_t>());
  const json added = j.value("added_tokens", json::array());
  for (const json& a : added) max_id = std::max<int64_t>(max_id, a.at("id").get<int64_t>());
  if (max_id < 0) return InvalidArgument("tokenizer.json has an empty vocabulary");
  if (max_id >= (int64_t{1} << 21)) return InvalidArgument("token id " + std::to_string(max_id) + " is implausible");
  spec.tokens.assign(max_id + 1, "");
  spec.types.assign(max_id + 1, model::TokenType::kUnused);  // holes stay unused
  for (const auto& [text, id] : model.at("vocab").items()) {
    int64_t i = id.get<int64_t>();
    if (i < 0) return InvalidArgument("negative token id for '" + text + "'");
    spec.tokens[i] = text;
    spec.types[i] = model::TokenType::kNormal;
  }
  for (const json& a : added) {
    int64_t i = a.at("id").get<int64_t>();
    if (i < 0) return InvalidArgument("negative added token id");
    bool special = a.value("special", false);
    spec.tokens[i] = a.at("content").get<std::string>();
    spec.types[i] = special ? model::TokenType::kControl : model::TokenType::kUserDefined;
    spec.added.push_back({static_cast<int32_t>(i), special, a.value("lstrip", false), a.value("rstrip", false)});
  }
  for (const json& m : model.value("merges", json::array())) {
    if (m.is_string()) {
      std::string s = m.get<std::string>();
      size_t pos = s.find(' ', 1);
      if (pos == std::string::npos) return InvalidArgument("merge without a space: '" + s + "'");
      spec.merges.emplace_back(s.substr(0, pos), s.substr(pos + 1));
    } else if (m.is_array() && m.size() == 2) {
      spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return InvalidArgument("merge is neither \"a b\" nor [a, b]");
    }
  }
  LINEAGE_RETURN_IF_ERROR(AddNormalizer(j.value("normalizer", json()), &spec));
  LINEAGE_RETURN_IF_ERROR(AddPreTokenizer(j.value("pre_tokenizer", json()), &spec));
  LINEAGE_RETURN_IF_ERROR(CheckDecoder(j.value("decoder", json())));

  auto find_id = [&spec](const std::string& text) -> int32_t {
    if (text.empty()) return -1;
    for (size_t i = 0; i < spec.tokens.size(); ++i) {
      if (spec.tokens[i] == text) return static_cast<int32_t>(i);
    }
    return -1;
  };
  // A post-processor template that starts with a special token adds BOS
  // (Llama 3 nests it in a Sequence after ByteLevel).
  std::vector<json> processors;
  const json post = j.value("post_processor", json());
  if (post.is_object() && post.value("type", "") == "Sequence") {
    for (const json& p : post.value("processors", json::array())) processors.push_back(p);
  } else if (post.is_object()) {
    processors.push_back(post);
  }
  for (const json& p : processors) {
    if (!p.is_object() || p.value("type", "") != "TemplateProcessing") continue;
    const json single = p.value("single", json::array());
    if (!single.empty() && single[0].contains("SpecialToken")) {
      spec.bos_id = find_id(single[0]["SpecialToken"].value("id", ""));
      spec.add_bos = spec.bos_id >= 0;
    }
  }
  if (!config_json.empty()) {
    json cfg = json::parse(config_json, nullptr, false);
    if (cfg.is_discarded() || !cfg.is_object()) return InvalidArgument("tokenizer_config.json is not a JSON object");
    if (int32_t id = find_id(TokenName(cfg, "bos_token")); id >= 0) spec.bos_id = id;
    if (int32_t id = find_id(TokenName(cfg, "eos_token")); id >= 0) spec.eos_id = id;
    if (int32_t id = find_id(TokenName(cfg, "pad_token")); id >= 0) spec.pad_id = id;
    if (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) spec.add_bos = cfg["add_bos_token"].get<bool>();
    if (cfg.contains("chat_template")) {
      const json& t = cfg["chat_template"];
      if (t.is_string()) {
        spec.chat_template = t.get<std::string>();
      } else if (t.is_array()) {  // named templates: take "default"
        for (const json& e : t) {
          if (e.value("name", "") == "default") spec.chat_template = e.value("template", "");
        }
      }
    }
  }
  return spec;
}

}  // namespace

Result<Tokenizer> Tokenizer::FromHfJson(std::string_view tokenizer_json, std::string_view config_json) {
  Result<TokenizerSpec> spec = InvalidArgument("unparsed");
  try {
    spec = ParseSpec(tokenizer_json, config_json);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("tokenizer.json: ") + e.what());
  }
  if (!spec.ok()) return spec.status().With("tokenizer.json");
  return Build(std::move(spec).value());
}

}  // namespace lineage::text
