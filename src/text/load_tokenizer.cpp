// LoadTokenizer: a tokenizer from whatever a model path is.
#include <filesystem>

#include "core/read_file.h"
#include "model/gguf_file.h"
#include "text/tiktoken.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

// A tokenizer.json of a 256k vocabulary is tens of MB; nothing real nears this.
constexpr uint64_t kMaxTokenizerFileBytes = uint64_t{1} << 30;

Result<std::string> ReadFile(const std::filesystem::path& p) { return ReadFileBounded(p.string(), kMaxTokenizerFileBytes); }

Result<Tokenizer> FromJsonFile(const std::filesystem::path& json_path) {
  LINEAGE_ASSIGN_OR_RETURN(std::string json, ReadFile(json_path));
  std::string config;
  auto config_path = json_path.parent_path() / "tokenizer_config.json";
  std::error_code ec;
  if (std::filesystem::exists(config_path, ec)) {
    LINEAGE_ASSIGN_OR_RETURN(config, ReadFile(config_path));
  }
  return Tokenizer::FromHfJson(json, config, json_path.string(), config_path.string());
}

// Kimi's form: tiktoken.model, tokenizer_config.json and maybe chat_template.jinja.
Result<Tokenizer> FromTiktokenDir(const std::filesystem::path& dir) {
  const std::filesystem::path model_path = dir / "tiktoken.model", config_path = dir / "tokenizer_config.json",
                              template_path = dir / "chat_template.jinja";
  LINEAGE_ASSIGN_OR_RETURN(std::string model_text, ReadFile(model_path));
  std::string config, chat_template;
  std::error_code ec;
  if (std::filesystem::exists(config_path, ec)) {
    LINEAGE_ASSIGN_OR_RETURN(config, ReadFile(config_path));
  }
  if (std::filesystem::exists(template_path, ec)) {
    LINEAGE_ASSIGN_OR_RETURN(chat_template, ReadFile(template_path));
  }
  return TokenizerFromTiktoken(model_text, config, chat_template, model_path.string(), config_path.string());
}

Result<Tokenizer> LoadModelTokenizer(const std::string& model_path) {
  std::filesystem::path p(model_path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    if (std::filesystem::exists(p / "tokenizer.json", ec)) return FromJsonFile(p / "tokenizer.json");
    if (std::filesystem::exists(p / "tiktoken.model", ec)) return FromTiktokenDir(p);
    return NotFound("no tokenizer.json or tiktoken.model in " + model_path);
  }
  if (!std::filesystem::exists(p, ec)) return NotFound("no such model path: " + model_path);
  if (p.extension() == ".json") return FromJsonFile(p);
  // Any other file is read as GGUF whatever its name, as the model loader
  // does: a file that is not one fails on its magic with a clear message.
  LINEAGE_ASSIGN_OR_RETURN(model::GgufFile gguf, model::GgufFile::Open(model_path));
  return Tokenizer::FromGguf(gguf);
}

}  // namespace

Result<Tokenizer> LoadTokenizer(const std::string& model_path) {
  // Every check returns a Status; this catch is the backstop that keeps a
  // missed case (or an allocation failure) an error instead of an abort.
  try {
    return LoadModelTokenizer(model_path);
  } catch (const std::exception& e) {
    return Internal(model_path + ": loading the tokenizer failed: " + e.what());
  }
}

}  // namespace lineage::text
