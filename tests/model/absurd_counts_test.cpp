// Model files that declare absurd counts, shapes or offsets (2^31-1, 2^32-1,
// 2^63-1, 2^64-1) fail fast with an error naming the file and the value,
// before anything of that size is allocated or looped over; and hyper-
// parameters that cannot be used (eps, rope theta, context <= 0, NaN, inf)
// are rejected from both formats.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "file_bytes.h"
#include "gguf_rewrite.h"
#include "model/load_model.h"
#include "test_util.h"

namespace lineage::model {
namespace {

using testing_util::Bytes;
using testing_util::EditSafetensorsHeader;
using testing_util::ExpectError;
using testing_util::FreshGguf;
using testing_util::FreshHf;
using testing_util::GgufOverrides;
using testing_util::GgufString;
using testing_util::PatchTensorEntry;
using testing_util::ReadBytes;
using testing_util::ReplaceOnce;
using testing_util::WriteBytes;

constexpr uint64_t kAbsurd[] = {(uint64_t{1} << 31) - 1, (uint64_t{1} << 32) - 1, (uint64_t{1} << 63) - 1,
                                ~uint64_t{0}};

// LoadModel(path) fails, names `words`, and takes well under a second.
void ExpectFastError(const std::string& path, const std::vector<std::string>& words) {
  const auto start = std::chrono::steady_clock::now();
  ExpectError(path, words);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "rejecting took " << seconds << " s";
}

// A u32 where it fits (the type real files use), else a u64.
std::function<void(GgufWriter&)> SetUnsigned(const std::string& key, uint64_t v) {
  return [key, v](GgufWriter& w) {
    if (v <= std::numeric_limits<uint32_t>::max()) {
      w.AddUint32(key, static_cast<uint32_t>(v));
    } else {
      w.AddUint64(key, v);
    }
  };
}

TEST(AbsurdGguf, MetadataCountsFailFast) {
  const std::string src = FreshGguf("absurd_src.gguf");
  const std::string dst = testing_util::TempPath("absurd.gguf");
  for (const char* key : {"block_count", "nextn_predict_layers", "embedding_length", "feed_forward_length",
                          "context_length", "attention.head_count", "attention.head_count_kv",
                          "attention.key_length", "rope.dimension_count", "full_attention_interval",
                          "ssm.conv_kernel", "ssm.state_size", "ssm.group_count", "ssm.time_step_rank",
                          "ssm.inner_size"}) {
    for (uint64_t v : kAbsurd) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(v));
      const std::string full = std::string("qwen35.") + key;
      testing_util::RewriteGguf(src, dst, {{full, SetUnsigned(full, v)}});
      ExpectFastError(dst, {dst, "'" + full + "'", std::to_string(v)});
    }
  }
}

TEST(AbsurdGguf, TokenIdsFailFast) {
  const std::string src = FreshGguf("absurd_ids_src.gguf");
  const std::string dst = testing_util::TempPath("absurd_ids.gguf");
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
    for (uint64_t v : {(uint64_t{1} << 32) - 1, (uint64_t{1} << 63) - 1}) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(v));
      testing_util::RewriteGguf(src, dst, {{key, SetUnsigned(key, v)}});
      ExpectFastError(dst, {dst, std::string("'") + key + "'", std::to_string(v)});
    }
  }
}

// A block count the limits allow but the file cannot hold.
TEST(AbsurdGguf, BlockCountAboveTheTensorDirectory) {
  const std::string src = FreshGguf("absurd_blocks_src.gguf");
  const std::string dst = testing_util::TempPath("absurd_blocks.gguf");
  testing_util::RewriteGguf(src, dst, {{"qwen35.block_count", SetUnsigned("qwen35.block_count", 4000)}});
  ExpectFastError(dst, {dst, "'qwen35.block_count' is 4000", "tensors"});
}

TEST(AbsurdGguf, HeaderCountsFailFast) {
  const std::string p = FreshGguf("absurd_header.gguf");
  const Bytes original = ReadBytes(p);
  for (size_t field_at : {size_t{8}, size_t{16}}) {  // tensor_count, kv_count
    for (uint64_t v : kAbsurd) {
      SCOPED_TRACE("header field at " + std::to_string(field_at) + " = " + std::to_string(v));
      Bytes b = original;
      std::memcpy(&b[field_at], &v, 8);
      WriteBytes(p, b);
      ExpectFastError(p, {p, "count"});
    }
  }
}

TEST(AbsurdGguf, StringAndArrayLengthsFailFast) {
  const std::string p = FreshGguf("absurd_lengths.gguf");
  const Bytes original = ReadBytes(p);
  for (uint64_t v : kAbsurd) {
    SCOPED_TRACE(v);
    // The length of a key string.
    Bytes b = original;
    const size_t key_at = b.find(GgufString("general.name"));
    ASSERT_NE(key_at, Bytes::npos);
    std::memcpy(&b[key_at], &v, 8);
    WriteBytes(p, b);
    ExpectFastError(p, {p, "truncated"});
    // The element count of tokenizer.ggml.tokens: key, u32 type 9, u32 element type 8, u64 count.
    b = original;
    const size_t tokens_at = b.find(GgufString("tokenizer.ggml.tokens"));
    ASSERT_NE(tokens_at, Bytes::npos);
    std::memcpy(&b[tokens_at + 8 + 21 + 8], &v, 8);
    WriteBytes(p, b);
    ExpectFastError(p, {p, "tokenizer.ggml.tokens"});
  }
}

TEST(AbsurdGguf, TensorShapesAndOffsetsFailFast) {
  const std::string p = FreshGguf("absurd_tensors.gguf");
  const Bytes original = ReadBytes(p);
  const std::string name = "blk.0.attn_gate.weight";  // 2-D: n_dims, ne[0], ne[1], type, offset
  for (uint64_t v : kAbsurd) {
    SCOPED_TRACE(v);
    for (size_t skip : {size_t{4}, size_t{4 + 8}}) {  // ne[0], ne[1]
      Bytes b = original;
      PatchTensorEntry<uint64_t>(b, name, skip, v);
      WriteBytes(p, b);
      ExpectFastError(p, {p, "'" + name + "'"});
    }
    Bytes b = original;
    PatchTensorEntry<uint64_t>(b, name, 4 + 16 + 4, v & ~uint64_t{31});  // offset, kept aligned
    WriteBytes(p, b);
    ExpectFastError(p, {p, "'" + name + "'", "offset"});
    b = original;
    PatchTensorEntry<uint32_t>(b, name, 0, static_cast<uint32_t>(v));  // n_dims
    WriteBytes(p, b);
    ExpectFastError(p, {p, "'" + name + "'", "dimensions"});
  }
}

TEST(AbsurdSafetensors, HeaderLengthFailsFast) {
  const std::string dir = FreshHf("absurd_header_hf");
  const std::string p = dir + "/model.safetensors";
  const Bytes original = ReadBytes(p);
  for (uint64_t v : kAbsurd) {
    SCOPED_TRACE(v);
    Bytes b = original;
    std::memcpy(b.data(), &v, 8);
    WriteBytes(p, b);
    ExpectFastError(dir, {p, "header length " + std::to_string(v)});
  }
}

TEST(AbsurdSafetensors, ShapesAndOffsetsFailFast) {
  const std::string dir = FreshHf("absurd_shapes_hf");
  const std::string p = dir + "/model.safetensors";
  const Bytes original = ReadBytes(p);
  const std::string name = "model.language_model.layers.0.mlp.up_proj.weight";
  for (uint64_t v : kAbsurd) {
    SCOPED_TRACE(v);
    for (const char* field : {"shape", "data_offsets"}) {
      for (int i : {0, 1}) {
        WriteBytes(p, original);
        EditSafetensorsHeader(p, [&](nlohmann::json& h) { h[name][field][i] = v; });
        ExpectFastError(dir, {p, name});
      }
    }
    // Three huge dimensions whose product overflows 64 bits.
    WriteBytes(p, original);
    EditSafetensorsHeader(p, [&](nlohmann::json& h) { h[name]["shape"] = {1u << 30, 1u << 30, 1u << 30}; });
    ExpectFastError(dir, {p, name, "overflows"});
  }
}

TEST(AbsurdHfConfig, CountsFailFast) {
  const std::string dir = FreshHf("absurd_config_hf");
  const nlohmann::json original = nlohmann::json::parse(ReadBytes(dir + "/config.json"));
  for (const char* key : {"num_hidden_layers", "hidden_size", "intermediate_size", "vocab_size", "head_dim",
                          "num_attention_heads", "num_key_value_heads", "linear_key_head_dim",
                          "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads",
                          "linear_conv_kernel_dim", "max_position_embeddings"}) {
    for (uint64_t v : kAbsurd) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(v));
      nlohmann::json c = original;
      c["text_config"][key] = v;
      WriteBytes(dir + "/config.json", c.dump());
      ExpectFastError(dir, {dir + "/config.json", std::string("'text_config.") + key + "'", std::to_string(v)});
    }
  }
}

// 17.6: eps, rope theta and context length must be usable numbers.
TEST(UnusableHyperParameters, HfConfigRejectsNonPositiveAndInfinite) {
  const std::string dir = FreshHf("hyper_hf");
  const std::string config = ReadBytes(dir + "/config.json");
  const nlohmann::json original = nlohmann::json::parse(config);
  for (const std::vector<std::string>& path :
       {std::vector<std::string>{"text_config", "rms_norm_eps"},
        std::vector<std::string>{"text_config", "rope_parameters", "rope_theta"},
        std::vector<std::string>{"text_config", "max_position_embeddings"}}) {
    // JSON has no NaN or infinity (a literal like 1e999 fails to parse, see
    // below); 1e300 is past every limit.
    for (const std::string v : {"0", "-1", "-1e-6", "0.0", "-1e300", "1e300"}) {
      SCOPED_TRACE(path.back() + " = " + v);
      nlohmann::json c = original;
      nlohmann::json* at = &c;
      for (const std::string& k : path) at = &(*at)[k];
      *at = "@value@";
      std::string text = c.dump();
      text.replace(text.find("\"@value@\""), 9, v);
      WriteBytes(dir + "/config.json", text);
      std::string dotted = path[0];
      for (size_t i = 1; i < path.size(); ++i) dotted += "." + path[i];
      ExpectFastError(dir, {dir + "/config.json", "'" + dotted + "'", "expected"});
    }
  }
  std::string text = original.dump();
  text.replace(text.find("1e-06"), 5, "1e999");
  WriteBytes(dir + "/config.json", text);
  ExpectFastError(dir, {dir + "/config.json", "bad JSON"});
}

TEST(UnusableHyperParameters, FlatQwen3ConfigRejectsBadRopeTheta) {
  auto spec = LookupShape(Arch::kQwen3, "tiny");
  const std::string dir = testing_util::Write(*spec, FileFormat::kSafetensors, DType::kBF16, 1, "hyper_qwen3_hf");
  nlohmann::json c = nlohmann::json::parse(ReadBytes(dir + "/config.json"));
  c["rope_theta"] = -10000.0;
  WriteBytes(dir + "/config.json", c.dump());
  ExpectFastError(dir, {dir + "/config.json", "'rope_theta'", "-10000"});
}

TEST(UnusableHyperParameters, GgufRejectsNonPositiveNanAndInf) {
  const std::string src = FreshGguf("hyper_src.gguf");
  const std::string dst = testing_util::TempPath("hyper.gguf");
  for (const char* key : {"qwen35.rope.freq_base", "qwen35.attention.layer_norm_rms_epsilon"}) {
    for (float v : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(v));
      const std::string k = key;
      testing_util::RewriteGguf(src, dst, {{k, [k, v](GgufWriter& w) { w.AddFloat32(k, v); }}});
      ExpectFastError(dst, {dst, "'" + k + "'", "expected a finite number"});
    }
  }
  testing_util::RewriteGguf(src, dst, {{"qwen35.context_length", SetUnsigned("qwen35.context_length", 0)}});
  ExpectFastError(dst, {dst, "'qwen35.context_length' is 0"});
}

// The rewrite itself keeps a loadable model, so the errors above come from
// the values, not from the rewriting.
TEST(AbsurdGguf, UnchangedRewriteLoads) {
  const std::string src = FreshGguf("rewrite_src.gguf");
  const std::string dst = testing_util::TempPath("rewrite.gguf");
  testing_util::RewriteGguf(src, dst, {});
  auto m = LoadModel(dst);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
}

}  // namespace
}  // namespace lineage::model
