// Fuzz targets "gguf" and "safetensors": model files through their readers,
// then everything a loader reads from an accepted file (metadata getters,
// the model config, the tokenizer, every tensor's view).
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/scratch_file.h"
#include "model/gguf_config.h"
#include "model/gguf_file.h"
#include "model/safetensors_file.h"
#include "text/tokenizer.h"

namespace lineage::fuzz {
namespace {

int FuzzGguf(const uint8_t* data, size_t size) {
  std::string path = WriteScratchFile(".gguf", data, size);
  if (path.empty()) return 0;
  auto g = model::GgufFile::Open(path);
  if (!g.ok()) return 0;
  for (const auto& kv : g->metadata()) {
    (void)g->GetInt(kv.first);
    (void)g->GetFloat(kv.first);
    (void)g->GetBool(kv.first);
    (void)g->GetString(kv.first);
    (void)g->GetStringArray(kv.first);
    (void)g->GetIntArray(kv.first);
    (void)g->GetFloatArray(kv.first);
  }
  for (const auto& t : g->tensors()) (void)g->Tensor(t.name);
  (void)model::ParseGgufConfig(*g);
  auto tok = text::Tokenizer::FromGguf(*g);
  if (tok.ok()) (void)tok->Encode("Hello, world! 123 <|im_start|>");
  return 1;
}

int FuzzSafetensors(const uint8_t* data, size_t size) {
  std::string path = WriteScratchFile(".safetensors", data, size);
  if (path.empty()) return 0;
  auto f = model::SafetensorsFile::Open(path);
  if (!f.ok()) return 0;
  for (const std::string& name : f->names()) (void)f->Tensor(name);
  return 1;
}

LINEAGE_FUZZ_TARGET("gguf", FuzzGguf,
                    {"GGUF", std::string("\x03\0\0\0", 4), std::string("\x08\0\0\0", 4), std::string("\x09\0\0\0", 4),
                     "general.architecture", "general.alignment", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                     "tokenizer.ggml.model", "gpt2", "llama", "qwen35", ".block_count", ".context_length",
                     ".embedding_length", ".attention.head_count", ".feed_forward_length", "token_embd.weight",
                     "output_norm.weight", "blk.0.attn_norm.weight"},
                    1 << 20, {});

LINEAGE_FUZZ_TARGET("safetensors", FuzzSafetensors,
                    {"{", "}", "[", "]", ",", ":", "\"", "\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"F32\"",
                     "\"F16\"", "\"BF16\"", "\"I64\"", "\"__metadata__\"", std::string("\0\0\0\0\0\0\0", 7)},
                    1 << 16, {{"[", "]"}, {"{\"a\":", "}"}});

}  // namespace
}  // namespace lineage::fuzz
