// Corrupt, truncated and unsupported model files: one test per case, each
// checking that LoadModel fails with an error naming the file, the tensor or
// key, and the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/load_model.h"
#include "file_bytes.h"
#include "test_util.h"

namespace lineage::model {
namespace {

using testing_util::Bytes;
using testing_util::EditSafetensorsHeader;
using testing_util::GgufString;
using testing_util::PatchTensorEntry;
using testing_util::ReadBytes;
using testing_util::ReplaceOnce;
using testing_util::WriteBytes;

using testing_util::ExpectError;
using testing_util::FreshGguf;
using testing_util::FreshHf;

TEST(CorruptGguf, MissingTensor) {
  std::string p = FreshGguf("missing.gguf");
  Bytes b = ReadBytes(p);
  ReplaceOnce(b, GgufString("blk.2.ssm_a"), GgufString("blk.2.ssm_x"));
  WriteBytes(p, b);
  ExpectError(p, {p, "'blk.2.ssm_a'", "missing"});
}

TEST(CorruptGguf, WrongShape) {
  std::string p = FreshGguf("shape.gguf");
  Bytes b = ReadBytes(p);
  // ssm_norm is 1-D {32}: n_dims (u32 1) then ne[0] (u64 32) follow the name.
  PatchTensorEntry<uint64_t>(b, "blk.0.ssm_norm.weight", 4, 16);
  WriteBytes(p, b);
  ExpectError(p, {p, "'blk.0.ssm_norm.weight'", "shape [16]", "expected [32]"});
}

TEST(CorruptGguf, UnsupportedTensorType) {
  std::string p = FreshGguf("type.gguf");
  Bytes b = ReadBytes(p);
  // attn_gate {128, 128}: after name, n_dims (4) and two ne (16) comes the u32 ggml type.
  PatchTensorEntry<uint32_t>(b, "blk.0.attn_gate.weight", 4 + 16, 16);  // IQ2_XXS: a GGML type we do not read
  WriteBytes(p, b);
  ExpectError(p, {p, "'blk.0.attn_gate.weight'", "IQ2_XXS"});
}

TEST(CorruptGguf, TensorTypeIdOutOfRange) {
  std::string p = FreshGguf("type_range.gguf");
  Bytes b = ReadBytes(p);
  PatchTensorEntry<uint32_t>(b, "blk.0.attn_gate.weight", 4 + 16, 0xdeadu);
  WriteBytes(p, b);
  ExpectError(p, {p, "'blk.0.attn_gate.weight'", "type " + std::to_string(0xdeadu)});
}

TEST(CorruptGguf, TensorTypeDisagreesWithItsBytes) {
  std::string p = FreshGguf("type_size.gguf");
  Bytes b = ReadBytes(p);
  // BF16 bytes declared F32: the tensor would need twice its bytes and runs
  // into the next tensor's.
  PatchTensorEntry<uint32_t>(b, "blk.0.attn_gate.weight", 4 + 16, 0);
  WriteBytes(p, b);
  ExpectError(p, {p, "'blk.0.attn_gate.weight'", "overlaps", "does not match its bytes"});
}

TEST(CorruptGguf, TruncatedData) {
  std::string p = FreshGguf("truncated.gguf");
  Bytes b = ReadBytes(p);
  WriteBytes(p, b.substr(0, b.size() - 1000));
  ExpectError(p, {p, "tensor '", "truncated"});
}

TEST(CorruptGguf, UnknownArchitecture) {
  std::string p = FreshGguf("arch.gguf");
  Bytes b = ReadBytes(p);
  const Bytes string_type("\x08\0\0\0", 4);
  const Bytes key = GgufString("general.architecture") + string_type;
  ReplaceOnce(b, key + GgufString("qwen35"), key + GgufString("qwen99"));
  WriteBytes(p, b);
  ExpectError(p, {p, "unknown architecture 'qwen99'"});
}

TEST(CorruptGguf, MissingMetadataKey) {
  std::string p = FreshGguf("key.gguf");
  Bytes b = ReadBytes(p);
  ReplaceOnce(b, GgufString("qwen35.ssm.group_count"), GgufString("qwen35.ssm.group_counx"));
  WriteBytes(p, b);
  ExpectError(p, {p, "'qwen35.ssm.group_count'", "missing"});
}

TEST(CorruptSafetensors, BadHeaderJson) {
  std::string dir = FreshHf("badjson_hf");
  std::string p = dir + "/model.safetensors";
  Bytes b = ReadBytes(p);
  b[8] = 'X';  // the header's opening brace
  WriteBytes(p, b);
  ExpectError(dir, {p, "bad header JSON"});
}

TEST(CorruptSafetensors, DataPastTheEnd) {
  std::string dir = FreshHf("truncated_hf");
  std::string p = dir + "/model.safetensors";
  Bytes b = ReadBytes(p);
  WriteBytes(p, b.substr(0, b.size() - 100));
  ExpectError(dir, {p, "tensor '", "truncated"});
}

TEST(CorruptSafetensors, HeaderLongerThanFile) {
  std::string dir = FreshHf("header_hf");
  std::string p = dir + "/model.safetensors";
  Bytes b = ReadBytes(p);
  uint64_t huge = b.size();
  std::memcpy(b.data(), &huge, 8);
  WriteBytes(p, b);
  ExpectError(dir, {p, "header length", "past the end"});
}

TEST(CorruptSafetensors, MissingTensor) {
  std::string dir = FreshHf("missing_hf");
  const std::string name = "model.language_model.layers.1.linear_attn.dt_bias";
  EditSafetensorsHeader(dir + "/model.safetensors", [&](nlohmann::json& h) {
    h[name + "_x"] = h[name];
    h.erase(name);
  });
  ExpectError(dir, {dir + "/model.safetensors", "'" + name + "'", "missing"});
}

TEST(CorruptSafetensors, WrongShape) {
  std::string dir = FreshHf("shape_hf");
  const std::string name = "model.language_model.layers.0.linear_attn.in_proj_z.weight";
  EditSafetensorsHeader(dir + "/model.safetensors", [&](nlohmann::json& h) { h[name]["shape"] = {64, 256}; });
  ExpectError(dir, {dir + "/model.safetensors", "'" + name + "'", "shape [64, 256]", "expected [128, 128]"});
}

TEST(CorruptSafetensors, SizeDisagreesWithShape) {
  std::string dir = FreshHf("size_hf");
  const std::string name = "model.language_model.norm.weight";
  EditSafetensorsHeader(dir + "/model.safetensors", [&](nlohmann::json& h) { h[name]["shape"] = {100}; });
  ExpectError(dir, {dir + "/model.safetensors", "'" + name + "'", "bytes"});
}

TEST(CorruptSafetensors, UnsupportedDtype) {
  std::string dir = FreshHf("dtype_hf");
  const std::string name = "model.language_model.layers.0.mlp.up_proj.weight";
  EditSafetensorsHeader(dir + "/model.safetensors", [&](nlohmann::json& h) { h[name]["dtype"] = "I16"; });
  ExpectError(dir, {dir + "/model.safetensors", "'" + name + "'", "dtype I16"});
}

TEST(CorruptHfConfig, UnknownArchitecture) {
  std::string dir = FreshHf("arch_hf");
  nlohmann::json c = nlohmann::json::parse(ReadBytes(dir + "/config.json"));
  c["architectures"] = {"LlamaForCausalLM"};
  c["model_type"] = "llama";
  c["text_config"]["model_type"] = "llama";
  WriteBytes(dir + "/config.json", c.dump());
  ExpectError(dir, {dir + "/config.json", "unknown architecture 'LlamaForCausalLM'"});
}

TEST(CorruptHfConfig, MissingKey) {
  std::string dir = FreshHf("key_hf");
  nlohmann::json c = nlohmann::json::parse(ReadBytes(dir + "/config.json"));
  c["text_config"].erase("linear_num_value_heads");
  WriteBytes(dir + "/config.json", c.dump());
  ExpectError(dir, {dir + "/config.json", "'text_config.linear_num_value_heads'", "missing"});
}

TEST(CorruptHfConfig, BadJson) {
  std::string dir = FreshHf("json_hf");
  WriteBytes(dir + "/config.json", "{\"architectures\": [");
  ExpectError(dir, {dir + "/config.json", "bad JSON"});
}

TEST(CorruptHfConfig, NoWeights) {
  std::string dir = FreshHf("noweights_hf");
  std::filesystem::remove(dir + "/model.safetensors");
  ExpectError(dir, {dir, "model.safetensors"});
}

TEST(LoadModel, MissingPath) { ExpectError("/nonexistent/model.gguf", {"/nonexistent/model.gguf", "no such"}); }

}  // namespace
}  // namespace lineage::model

namespace lineage::model {
namespace {

// Every cut of a safetensors file and every flipped header byte is either
// rejected with an error naming the file or loads: never a crash (run under
// the sanitizer build to check memory safety too).
TEST(CorruptSafetensors, TruncationsAndHeaderFlipsNeverCrash) {
  auto spec = LookupShape(Arch::kQwen3, "tiny");
  std::string dir = testing_util::Write(*spec, FileFormat::kSafetensors, DType::kBF16, 1, "fuzz_hf");
  const std::string p = dir + "/model.safetensors";
  const Bytes original = ReadBytes(p);
  uint64_t header;
  std::memcpy(&header, original.data(), 8);
  for (size_t cut : {size_t{0}, size_t{7}, size_t{8}, size_t{20}, static_cast<size_t>(header) / 2,
                     static_cast<size_t>(header) + 7, static_cast<size_t>(header) + 8, original.size() / 2,
                     original.size() - 1}) {
    WriteBytes(p, original.substr(0, cut));
    auto m = LoadModel(dir);
    EXPECT_FALSE(m.ok()) << "cut at " << cut;
    if (!m.ok()) {
      EXPECT_NE(m.status().message().find(p), std::string::npos) << m.status().message();
    }
  }
  uint64_t state = 12345;
  for (int i = 0; i < 200; ++i) {
    Bytes b = original;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t at = 8 + (state >> 33) % header;
    b[at] = static_cast<char>(b[at] ^ (1 + (state >> 20) % 255));
    WriteBytes(p, b);
    auto m = LoadModel(dir);
    if (!m.ok()) {
      EXPECT_FALSE(m.status().message().empty());
    }
  }
}

}  // namespace
}  // namespace lineage::model
