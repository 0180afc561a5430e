// Every field of a real-layout model directory's JSON files, set to each
// JSON type and to extreme integers, loads or fails with an error that names
// the file (and, for config.json, the field): never a crash, an exception
// or an Internal error. Run under the sanitizer build to check memory safety
// and undefined behaviour as well.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "file_bytes.h"
#include "model/load_model.h"
#include "test_util.h"
#include "text/tokenizer.h"

namespace lineage::model {
namespace {

using Json = nlohmann::json;
using testing_util::ReadBytes;
using testing_util::WriteBytes;

// Replacement values: every JSON type, and integers at the edges of 0, 32
// and 64 bits.
std::vector<Json> Replacements() {
  return {Json(nullptr), Json(true), Json(false), Json("x"), Json::array(), Json::array({1, 2}),
          Json::object(), Json({{"a", 1}}), Json(0.5), Json(0), Json(-1), Json(int64_t{1} << 31),
          Json(std::numeric_limits<int64_t>::max())};
}

// Every value's JSON pointer, containers included. Past `max_children`
// members or elements only the first are visited: a vocabulary has
// thousands, all alike.
void CollectPointers(const Json& v, const Json::json_pointer& at, size_t max_children,
                     std::vector<Json::json_pointer>* out) {
  out->push_back(at);
  size_t n = 0;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end() && n < max_children; ++it, ++n)
      CollectPointers(it.value(), at / it.key(), max_children, out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size() && n < max_children; ++i, ++n) CollectPointers(v[i], at / i, max_children, out);
  }
}

// Tokens of a pointer, unescaped.
std::vector<std::string> ParseTokens(const Json::json_pointer& p) {
  std::vector<std::string> tokens;
  for (Json::json_pointer q = p; !q.empty(); q.pop_back()) tokens.insert(tokens.begin(), q.back());
  return tokens;
}

// "text_config.layer_types[3]": how JsonField names the value at `p`.
std::string DottedPath(const Json& root, const Json::json_pointer& p) {
  std::string out;
  Json::json_pointer at;
  for (const std::string& token : ParseTokens(p)) {
    if (root[at].is_array()) {
      out += "[" + token + "]";
    } else {
      out += (out.empty() ? "" : ".") + token;
    }
    at /= token;
  }
  return out;
}

struct Outcome {
  int loaded = 0, rejected = 0;
};

// Writes each variant of `file` (in `dir`) and checks `load` on it; the
// original is restored afterwards.
template <typename Load>
Outcome MutateEveryField(const std::string& dir, const std::string& file, size_t max_children, bool name_field,
                         Load load) {
  const std::string path = dir + "/" + file;
  const std::string original_text = ReadBytes(path);
  const Json original = Json::parse(original_text);
  std::vector<Json::json_pointer> pointers;
  CollectPointers(original, Json::json_pointer(), max_children, &pointers);
  Outcome out;
  for (const Json::json_pointer& p : pointers) {
    if (p.empty()) continue;
    const std::string dotted = DottedPath(original, p);
    for (const Json& value : Replacements()) {
      SCOPED_TRACE(file + ": " + dotted + " = " + value.dump());
      Json variant = original;
      variant[p] = value;
      WriteBytes(path, variant.dump());
      const Status s = load(dir);
      if (s.ok()) {
        ++out.loaded;
        continue;
      }
      ++out.rejected;
      EXPECT_NE(s.code(), StatusCode::kInternal) << s.ToString();
      EXPECT_NE(s.message().find(dir), std::string::npos) << s.ToString();
      // An error about this file names the field that was changed, or one
      // inside it. A null is an absent field, which may surface as another
      // field missing (a null text_config makes the config flat).
      if (name_field && !value.is_null() && s.message().find(path) != std::string::npos) {
        EXPECT_NE(s.message().find("'" + dotted), std::string::npos) << s.ToString();
      }
    }
  }
  WriteBytes(path, original_text);
  return out;
}

Status LoadModelStatus(const std::string& dir) { return LoadModel(dir).status(); }
Status LoadTokenizerStatus(const std::string& dir) { return text::LoadTokenizer(dir).status(); }

TEST(ConfigMutation, EveryConfigFieldLoadsOrFailsWithItsName) {
  for (Arch arch : {Arch::kQwen3_5, Arch::kQwen3}) {
    auto spec = LookupShape(arch, "tiny");
    const std::string dir = testing_util::Write(*spec, FileFormat::kSafetensors, DType::kBF16, 1,
                                                std::string("mutate_") + ArchName(arch));
    ASSERT_TRUE(LoadModel(dir).ok());
    Outcome o = MutateEveryField(dir, "config.json", 1000, /*name_field=*/true, LoadModelStatus);
    EXPECT_GT(o.rejected, 100) << ArchName(arch);  // the sizes do matter
    EXPECT_GT(o.loaded, 10) << ArchName(arch);     // and unused fields do not
    ASSERT_TRUE(LoadModel(dir).ok());
  }
}

TEST(ConfigMutation, EveryGenerationConfigFieldLoadsOrFails) {
  const std::string dir = testing_util::FreshHf("mutate_generation");
  Outcome o = MutateEveryField(dir, "generation_config.json", 1000, /*name_field=*/true, LoadModelStatus);
  EXPECT_GT(o.rejected, 5);
}

TEST(ConfigMutation, EveryTokenizerFieldLoadsOrFails) {
  const std::string dir = testing_util::FreshHf("mutate_tokenizer");
  ASSERT_TRUE(text::LoadTokenizer(dir).ok());
  Outcome config = MutateEveryField(dir, "tokenizer_config.json", 3, /*name_field=*/false, LoadTokenizerStatus);
  Outcome tokenizer = MutateEveryField(dir, "tokenizer.json", 3, /*name_field=*/false, LoadTokenizerStatus);
  EXPECT_GT(config.rejected, 5);
  EXPECT_GT(tokenizer.rejected, 50);
}

}  // namespace
}  // namespace lineage::model
