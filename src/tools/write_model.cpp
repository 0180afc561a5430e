#include "tools/write_model.h"

#include <filesystem>

#include "tools/gguf_model_writer.h"
#include "model/encode.h"
#include "model/hf_config.h"
#include "tools/random_model.h"
#include "tools/safetensors_writer.h"
#include "model/tensor_plan.h"
#include "model/tokenizer_files.h"

namespace lineage::model {
namespace {

Status WriteHfDirectory(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& o, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create directory: " + ec.message());
  const ModelConfig c = HfConfigFor(spec);
  SafetensorsWriter st;
  for (const PlannedTensor& p : PlanTensors(c)) {
    const DType stored = HfStoredDType(p, o.dtype);
    const uint64_t seed = o.seed;
    const Arch arch = c.arch;
    for (const std::string& name : HfTensorNames(p)) {
      st.AddTensor(name, stored, p.hf_shape, [p, name, stored, seed, arch](FileSink& sink) -> Status {
        return WriteHfRows(arch, p, name, seed, stored,
                           [&](const uint8_t* bytes, size_t n) { return sink.Write(bytes, n); });
      });
    }
  }
  if (o.shard_bytes > 0) {
    LINEAGE_ASSIGN_OR_RETURN(int shards, st.WriteSharded(dir, o.shard_bytes));
    (void)shards;
  } else {
    LINEAGE_RETURN_IF_ERROR(st.WriteFile(dir + "/model.safetensors"));
  }
  LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/config.json", MakeHfConfig(spec, vocab, o.dtype).dump(2) + "\n"));
  LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/generation_config.json", MakeGenerationConfig(vocab).dump(2) + "\n"));
  if (vocab.tiktoken_model.empty()) {
    LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/tokenizer.json", MakeTokenizerJson(vocab)));
  } else {
    LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/tiktoken.model", vocab.tiktoken_model));
  }
  return WriteTextFile(dir + "/tokenizer_config.json", MakeTokenizerConfigJson(vocab, c.context_length));
}

}  // namespace

Status WriteModel(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& o, const std::string& out_path) {
  if (static_cast<int64_t>(vocab.tokens.size()) != spec.config.vocab)
    return InvalidArgument("vocabulary has " + std::to_string(vocab.tokens.size()) + " tokens but the shape needs " +
                           std::to_string(spec.config.vocab));
  if (o.preset && o.format != FileFormat::kGguf)
    return InvalidArgument("dtype " + std::string(QuantPresetName(*o.preset)) +
                           " is only available for the gguf format (safetensors holds f32, f16, bf16)");
  if (o.preset) return WriteGgufModel(spec, vocab, o, out_path);
  switch (o.dtype) {
    case DType::kF32: case DType::kF16: case DType::kBF16: break;
    case DType::kQ8_0:
      if (o.format == FileFormat::kGguf) break;
      return InvalidArgument("dtype q8_0 is only available for the gguf format (safetensors holds f32, f16, bf16)");
    default:
      return InvalidArgument("dtype " + std::string(Info(o.dtype).name) + " cannot be written (use f32, f16, bf16, q8_0)");
  }
  if (o.format == FileFormat::kGguf) return WriteGgufModel(spec, vocab, o, out_path);
  return WriteHfDirectory(spec, vocab, o, out_path);
}

}  // namespace lineage::model
