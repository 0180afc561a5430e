#include "server/utility_endpoints.h"

#include "server/api/json_fields.h"
#include "server/api/openai_request.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

Result<const text::Tokenizer*> TokenizerOf(const Backend& backend) {
  const text::Tokenizer* t = backend.tokenizer();
  if (!t || !t->valid()) return Unsupported("this server has no tokenizer");
  return t;
}

// A token's bytes as llama-server shows a piece: a string when they are
// UTF-8, else the list of byte values.
json Piece(std::string_view bytes) {
  if (text::IsValidUtf8(bytes)) return std::string(bytes);
  json out = json::array();
  for (unsigned char c : bytes) out.push_back(static_cast<int>(c));
  return out;
}

Status CheckId(const json& v, const std::string& path, int64_t vocab) {
  if (!v.is_number_integer()) return TypeError(path, "token id (integer)", v);
  const int64_t id = v.get<int64_t>();
  if (id < 0 || id >= vocab)
    return InvalidArgument("'" + path + "' is token " + std::to_string(id) + "; the vocabulary has " +
                           std::to_string(vocab) + " tokens");
  return Status::Ok();
}

}  // namespace

Result<json> TokenizeResponse(const Backend& backend, const std::string& body) {
  LINEAGE_ASSIGN_OR_RETURN(const text::Tokenizer* tok, TokenizerOf(backend));
  LINEAGE_ASSIGN_OR_RETURN(json req, ParseBodyObject(body));
  bool add_special = false, parse_special = true, with_pieces = false;
  LINEAGE_RETURN_IF_ERROR(GetBool(req, "add_special", "", &add_special));
  LINEAGE_RETURN_IF_ERROR(GetBool(req, "parse_special", "", &parse_special));
  LINEAGE_RETURN_IF_ERROR(GetBool(req, "with_pieces", "", &with_pieces));
  std::vector<int32_t> ids;
  text::EncodeOptions o;
  o.parse_special = parse_special;
  o.add_special = add_special;
  if (Has(req, "content")) {
    const json& content = req["content"];
    // A string, or (llama-server's mixed prompts) an array of strings and token ids.
    if (content.is_string()) {
      ids = tok->Encode(content.get<std::string>(), o);
    } else if (content.is_array()) {
      for (size_t i = 0; i < content.size(); ++i) {
        const std::string path = "content[" + std::to_string(i) + "]";
        if (content[i].is_string()) {
          tok->EncodeAppend(content[i].get<std::string>(), o, &ids);
        } else {
          LINEAGE_RETURN_IF_ERROR(CheckId(content[i], path, tok->vocab_size()));
          ids.push_back(content[i].get<int32_t>());
        }
        o.add_special = false;  // BOS once, before the first part
      }
    } else {
      return TypeError("content", "string or array", content);
    }
  }
  json tokens = json::array();
  for (int32_t id : ids) {
    if (with_pieces) tokens.push_back({{"id", id}, {"piece", Piece(tok->TokenBytes(id))}});
    else tokens.push_back(id);
  }
  return json{{"tokens", std::move(tokens)}};
}

Result<json> DetokenizeResponse(const Backend& backend, const std::string& body) {
  LINEAGE_ASSIGN_OR_RETURN(const text::Tokenizer* tok, TokenizerOf(backend));
  LINEAGE_ASSIGN_OR_RETURN(json req, ParseBodyObject(body));
  std::vector<int32_t> ids;
  if (Has(req, "tokens")) {
    const json& tokens = req["tokens"];
    if (!tokens.is_array()) return TypeError("tokens", "array", tokens);
    for (size_t i = 0; i < tokens.size(); ++i) {
      LINEAGE_RETURN_IF_ERROR(CheckId(tokens[i], "tokens[" + std::to_string(i) + "]", tok->vocab_size()));
      ids.push_back(tokens[i].get<int32_t>());
    }
  }
  return json{{"content", tok->Decode(ids)}};
}

Result<json> ApplyTemplateResponse(Backend& backend, const std::string& body) {
  LINEAGE_ASSIGN_OR_RETURN(ApiRequest request, ParseOpenAiChatRequest(body));
  LINEAGE_ASSIGN_OR_RETURN(std::string prompt, backend.RenderPrompt(request));
  return json{{"prompt", std::move(prompt)}};
}

json PropsResponse(const Backend& backend, const std::string& build_info, int processing) {
  const BackendProps p = backend.Props();
  json settings = {{"id", 0},
                   {"id_task", -1},
                   {"n_ctx", backend.context_tokens()},
                   {"speculative", false},
                   {"is_processing", processing > 0},
                   {"params", {{"n_predict", -1}, {"temperature", 1.0}, {"top_k", 0}, {"top_p", 1.0}, {"stream", false}}}};
  return {{"default_generation_settings", settings},
          {"total_slots", p.total_slots},
          {"model_alias", backend.model_id()},
          {"model_path", p.model_path},
          {"n_ctx", backend.context_tokens()},
          {"chat_template", p.chat_template},
          {"chat_template_caps", json::object()},
          {"bos_token", p.bos_token},
          {"eos_token", p.eos_token},
          {"modalities", {{"vision", false}, {"audio", false}}},
          {"build_info", build_info},
          {"is_sleeping", false}};
}

}  // namespace lineage::server
