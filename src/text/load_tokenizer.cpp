// LoadTokenizer: a tokenizer from whatever a model path is.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/gguf_file.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

Result<std::string> ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return IoError("cannot open " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + p.string());
  return ss.str();
}

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

Result<Tokenizer> LoadModelTokenizer(const std::string& model_path) {
  std::filesystem::path p(model_path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    if (std::filesystem::exists(p / "tokenizer.json", ec)) return FromJsonFile(p / "tokenizer.json");
    return NotFound("no tokenizer.json in " + model_path);
  }
  if (!std::filesystem::exists(p, ec)) return NotFound("no such model path: " + model_path);
  if (p.extension() == ".gguf") {
    LINEAGE_ASSIGN_OR_RETURN(model::GgufFile gguf, model::GgufFile::Open(model_path));
    return Tokenizer::FromGguf(gguf);
  }
  if (p.extension() == ".json") return FromJsonFile(p);
  return InvalidArgument("not a model directory, .gguf or tokenizer.json: " + model_path);
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
