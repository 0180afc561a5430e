#include "tools/write_model.h"

#include <algorithm>
#include <filesystem>

#include "tools/gguf_model_writer.h"
#include "model/encode.h"
#include "model/hf_config.h"
#include "model/mxfp4_checkpoint.h"
#include "model/quantize_blocks.h"
#include "tools/random_model.h"
#include "tools/safetensors_writer.h"
#include "model/tensor_plan.h"
#include "model/tokenizer_files.h"

namespace lineage::model {
namespace {

// Whether an HF checkpoint under `o` stores `p` as compressed-tensors MXFP4:
// the routed experts of the mxfp4_moe preset, one 2-D tensor per expert as
// Kimi K3's checkpoints have them.
bool HfMxfp4(const WriteOptions& o, const PlannedTensor& p) {
  return o.preset == QuantPreset::kMXFP4_MOE && IsExpertRole(p.role) && p.expert >= 0 && p.hf_shape.size() == 2 &&
         p.hf_shape[1] % 32 == 0;
}

// `p` as W.weight_packed and W.weight_scale (model/mxfp4_checkpoint.h):
// each row quantised to MXFP4 from the same random values as the plain form.
void AddMxfp4Tensor(SafetensorsWriter& st, Arch arch, const PlannedTensor& p, uint64_t seed) {
  const Mxfp4Names names = Mxfp4NamesFor(p.hf_name);
  const int64_t rows = p.hf_shape[0], cols = p.hf_shape[1];
  auto producer = [=](bool scales) {
    return [=](FileSink& sink) -> Status {
      std::vector<float> row(static_cast<size_t>(cols));
      std::vector<uint8_t> blocks(static_cast<size_t>(RowBytes(DType::kMXFP4, cols)));
      std::vector<uint8_t> codes(static_cast<size_t>(cols / 2)), scale(static_cast<size_t>(cols / 32));
      for (int64_t r = 0; r < rows; ++r) {
        FillHfRandom(arch, p, p.hf_name, seed, r * cols, cols, row.data());
        QuantizeRow(DType::kMXFP4, row.data(), cols, blocks.data());
        UnpackMxfp4Row(blocks.data(), cols, codes.data(), scale.data());
        LINEAGE_RETURN_IF_ERROR(scales ? sink.Write(scale.data(), scale.size()) : sink.Write(codes.data(), codes.size()));
      }
      return Status::Ok();
    };
  };
  st.AddBytes(names.packed, {rows, cols / 2}, producer(false));
  st.AddBytes(names.scale, {rows, cols / 32}, producer(true));
}

Status WriteHfDirectory(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& o, const std::string& dir) {
  const ModelConfig c = HfConfigFor(spec);
  const std::vector<PlannedTensor> plan = PlanTensors(c);
  const bool any_mxfp4 = std::any_of(plan.begin(), plan.end(), [&](const PlannedTensor& p) { return HfMxfp4(o, p); });
  if (o.preset && !any_mxfp4)
    return InvalidArgument("dtype mxfp4_moe in safetensors needs routed experts stored one tensor per expert "
                           "(as Kimi Linear's and Kimi K3's checkpoints); " + std::string(ArchName(c.arch)) +
                           " has no such tensors");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create directory: " + ec.message());
  SafetensorsWriter st;
  for (const PlannedTensor& p : plan) {
    if (HfMxfp4(o, p)) {
      AddMxfp4Tensor(st, c.arch, p, o.seed);
      continue;
    }
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
  nlohmann::json config = MakeHfConfig(spec, vocab, o.dtype);
  if (any_mxfp4)  // as compressed-tensors writes it (the fields the readers test)
    config["quantization_config"] = {{"quant_method", "compressed-tensors"}, {"format", "mxfp4-pack-quantized"}};
  LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/config.json", config.dump(2) + "\n"));
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
  if (o.preset && o.format != FileFormat::kGguf) {
    if (*o.preset != QuantPreset::kMXFP4_MOE)
      return InvalidArgument("dtype " + std::string(QuantPresetName(*o.preset)) +
                             " is only available for the gguf format (safetensors holds f32, f16, bf16, and "
                             "mxfp4_moe's compressed-tensors experts)");
    WriteOptions bf16 = o;  // the rest in bf16, as the released MXFP4 checkpoints
    bf16.dtype = DType::kBF16;
    return WriteHfDirectory(spec, vocab, bf16, out_path);
  }
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
