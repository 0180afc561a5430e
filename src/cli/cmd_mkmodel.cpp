// `lineage mkmodel`: writes a random-weight model in the exact layout of a
// real checkpoint (see docs/model-files.md), deterministic for a seed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "tools/chat_templates.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "tools/synthetic_vocab.h"

namespace lineage::cli {
namespace {

struct MkmodelArgs {
  std::string arch = "qwen3_5";
  std::string shape = "tiny";
  std::string format = "safetensors";
  std::string dtype = "bf16";
  uint64_t seed = 0;
  std::string out;
  int64_t vocab = 0;
  uint64_t shard_mb = 0;
  int64_t layers = 0;
  bool mtp = false;
};

int Run(const MkmodelArgs& a) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "mkmodel: %s\n", s.message().c_str());
    return 1;
  };
  auto arch = model::ParseArch(a.arch);
  if (!arch.ok()) return fail(arch.status());
  auto spec = model::LookupShape(*arch, a.shape, a.vocab);
  if (!spec.ok()) return fail(spec.status());
  if (a.layers > 0) {
    spec = model::CutLayers(*spec, a.layers);
    if (!spec.ok()) return fail(spec.status());
  }
  if (a.mtp) {
    if (!model::IsHybrid(*arch) && *arch != model::Arch::kGlmDsa && *arch != model::Arch::kDeepseek32)
      return fail(InvalidArgument("--mtp: " + a.arch + " models carry no MTP block (qwen3_5, qwen3_5_moe, "
                                  "qwen3_next, glm_dsa and deepseek32 do)"));
    spec->config.mtp_layers = 1;
  }
  model::WriteOptions o;
  if (a.format == "safetensors") o.format = model::FileFormat::kSafetensors;
  else if (a.format == "gguf") o.format = model::FileFormat::kGguf;
  else return fail(InvalidArgument("unknown format '" + a.format + "' (use safetensors or gguf)"));
  // q8_0 is both a dtype and a preset with the same result (every matrix
  // Q8_0); it keeps the dtype path.
  auto dtype = ParseDType(a.dtype);
  if (dtype && (!IsQuantized(*dtype) || *dtype == DType::kQ8_0)) {
    o.dtype = *dtype;
  } else if ((o.preset = model::ParseQuantPreset(a.dtype))) {
    o.dtype = DType::kF32;
  } else {
    return fail(InvalidArgument("unknown dtype '" + a.dtype + "' (use f32, bf16, f16, or for gguf q8_0, q4_0, " +
                                "q4_k_m, q5_k_m, q6_k, iq4_xs, mxfp4_moe)"));
  }
  o.seed = a.seed;
  o.shard_bytes = a.shard_mb << 20;
  model::VocabData vocab = text::MakeSyntheticVocab(spec->config.vocab, text::VocabFlavourFor(*arch), a.seed);
  vocab.chat_template = model::ChatTemplateFor(*arch);
  Status s = model::WriteModel(*spec, vocab, o, a.out);
  if (!s.ok()) return fail(s);
  std::printf("wrote %s %s (%s, %s, seed %llu) to %s\n", a.arch.c_str(), spec->shape.c_str(), a.format.c_str(),
              a.dtype.c_str(), static_cast<unsigned long long>(a.seed), a.out.c_str());
  return 0;
}

Register reg{{"mkmodel", "Write a random-weight model in a real checkpoint layout", [](CLI::App& sub) {
                auto args = std::make_shared<MkmodelArgs>();
                sub.add_option("--arch", args->arch, model::ArchNameList())
                    ->capture_default_str();
                sub.add_option("--shape", args->shape,
                               "tiny, qwen3.5-0.8b, qwen3-0.6b, qwen3.5-35b-a3b, qwen3-next-80b-a3b, "
                               "kimi-linear-48b-a3b, glm-5, glm-5.2, deepseek-v3.2, glm-5.3-flash (kda_dsa) or kimi-k3")
                    ->capture_default_str();
                sub.add_option("--layers", args->layers, "keep only the first N layers of the shape (0: all)")
                    ->capture_default_str();
                sub.add_option("--format", args->format, "safetensors (a directory) or gguf (a file)")
                    ->capture_default_str();
                sub.add_option("--dtype", args->dtype,
                               "f32, f16, bf16, or (gguf only) q8_0, q4_0, q4_k_m, q5_k_m, q6_k, iq4_xs; "
                               "mxfp4_moe (gguf, or safetensors with compressed-tensors experts)")
                    ->capture_default_str();
                sub.add_option("--seed", args->seed, "random seed")->capture_default_str();
                sub.add_option("--out", args->out, "output directory or .gguf file")->required();
                sub.add_option("--vocab", args->vocab, "vocabulary size (default: the shape's)");
                sub.add_flag("--mtp", args->mtp,
                             "also write one multi-token-prediction (NextN) block, the draft head of "
                             "--spec-type draft-mtp");
                sub.add_option("--shard-mb", args->shard_mb, "safetensors: shard size in MiB (0: one file)")
                    ->capture_default_str();
                return std::function<int()>([args] { return Run(*args); });
              }}};

}  // namespace
}  // namespace lineage::cli
