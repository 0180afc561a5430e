// `lineage generate`: prefill a prompt, then sample a continuation, printing
// it the way llama-completion does (the prompt text, then the continuation as
// it comes, timings on stderr), plus the continuation's token ids on a final
// `ids:` line. Stops at an end-of-generation token unless --ignore-eos.
// --logits-out writes the last prompt position's logits as raw little-endian
// float32 [vocab], for comparison with other implementations.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/file_env.h"
#include "cli/command.h"
#include "cli/model_options.h"
#include "engine/engine.h"
#include "tools/model_source.h"
#include "engine/sampler.h"
#include "text/stream_decoder.h"
#include "text/tokenizer.h"

namespace lineage::cli {
namespace {

struct GenerateArgs {
  engine::ModelSource source;
  std::string prompt;
  std::string prompt_ids;
  int64_t n = 16;
  float temp = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  EngineArgs engine_args;
  bool ignore_eos = false;
  std::string logits_out;
};

Result<std::vector<int32_t>> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      ids.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      return InvalidArgument("--prompt-ids: '" + item + "' is not a token id");
    }
  }
  if (ids.empty()) return InvalidArgument("--prompt-ids is empty");
  return ids;
}

Status WriteLogits(const std::string& path, const std::vector<float>& logits) {
  return WriteFileAtomic(path, std::string_view(reinterpret_cast<const char*>(logits.data()), logits.size() * sizeof(float)));
}

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

Status Run(const GenerateArgs& a) {
  LINEAGE_RETURN_IF_ERROR(ApplyIsa(a.engine_args));
  // The tokenizer is optional with --prompt-ids (an in-memory model has none):
  // without it only ids are printed.
  std::optional<text::Tokenizer> tokenizer;
  if (!a.source.path.empty()) {
    auto t = text::LoadTokenizer(a.source.path);
    if (t.ok()) {
      tokenizer = std::move(*t);
    } else if (!a.prompt.empty()) {
      return t.status().With("--prompt needs the model's tokenizer");
    }
  } else if (!a.prompt.empty()) {
    return InvalidArgument("--prompt needs a model file with a tokenizer (--model); use --prompt-ids");
  }
  std::vector<int32_t> prompt;
  if (!a.prompt.empty()) {
    prompt = tokenizer->Encode(a.prompt, {.parse_special = true, .add_special = true});
    if (prompt.empty()) return InvalidArgument("--prompt encodes to no tokens");
  } else {
    LINEAGE_ASSIGN_OR_RETURN(prompt, ParseIds(a.prompt_ids));
  }
  LINEAGE_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> m, engine::OpenModel(a.source));
  const engine::EngineOptions options = EngineOptionsFrom(a.engine_args);
  LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> eng, engine::Engine::Create(m, options));

  using Clock = std::chrono::steady_clock;
  engine::Sequence seq = eng->NewSequence();
  engine::PrefillResult pre;
  const auto t0 = Clock::now();
  LINEAGE_RETURN_IF_ERROR(eng->Prefill(seq, prompt, {}, &pre));
  const auto t1 = Clock::now();
  if (!a.logits_out.empty()) LINEAGE_RETURN_IF_ERROR(WriteLogits(a.logits_out, pre.logits));

  std::optional<text::StreamDecoder> text_out;
  if (tokenizer) {
    std::printf("%s", tokenizer->Decode(prompt).c_str());
    text_out.emplace(*tokenizer);
  }
  engine::Sampler sampler({a.temp, a.top_k, a.top_p, a.seed});
  const std::vector<int64_t>& eos = m->config.eos_token_ids;
  std::vector<int32_t> out;
  std::vector<float> logits = pre.logits;
  for (int64_t i = 0; i < a.n; ++i) {
    const int32_t tok = sampler.Next(logits);
    out.push_back(tok);
    if (text_out) {
      std::printf("%s", text_out->Push(tok).c_str());
      std::fflush(stdout);
    }
    const bool end_of_generation = std::find(eos.begin(), eos.end(), tok) != eos.end() ||
                                   (tokenizer && tokenizer->IsEndOfGeneration(tok));
    if (!a.ignore_eos && end_of_generation) break;
    if (i + 1 == a.n) break;
    engine::Sequence* one[] = {&seq};
    LINEAGE_RETURN_IF_ERROR(eng->Decode(one, std::span(&out.back(), 1), &logits));
  }
  const auto t2 = Clock::now();

  if (text_out) std::printf("%s\n", text_out->Flush().c_str());
  std::printf("ids:");
  for (int32_t t : out) std::printf(" %d", t);
  std::printf("\n");
  const double prompt_ms = Ms(t0, t1), gen_ms = Ms(t1, t2);
  const double gen_evals = static_cast<double>(out.size() > 0 ? out.size() - 1 : 0);
  std::fprintf(stderr, "model: %s\n", engine::DescribeModel(*m).c_str());
  std::fprintf(stderr, "prompt eval time = %10.2f ms / %5zu tokens (%8.2f ms per token, %8.2f tokens per second)\n",
               prompt_ms, prompt.size(), prompt_ms / prompt.size(), 1e3 * prompt.size() / prompt_ms);
  std::fprintf(stderr, "       eval time = %10.2f ms / %5.0f runs   (%8.2f ms per token, %8.2f tokens per second)\n",
               gen_ms, gen_evals, gen_evals > 0 ? gen_ms / gen_evals : 0.0, gen_evals > 0 ? 1e3 * gen_evals / gen_ms : 0.0);
  return Status::Ok();
}

Register reg{{"generate", "Generate a continuation of a prompt", [](CLI::App& sub) {
                auto a = std::make_shared<GenerateArgs>();
                AddModelOptions(sub, a->source);
                auto* prompt = sub.add_option("--prompt", a->prompt, "prompt text");
                auto* ids = sub.add_option("--prompt-ids", a->prompt_ids, "prompt token ids, comma separated");
                prompt->excludes(ids);
                sub.add_option("-n,--n-predict", a->n, "tokens to generate")
                    ->capture_default_str()
                    ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
                sub.add_option("--temp", a->temp, "temperature (0: greedy)")->capture_default_str()->check(CLI::Range(0.0, 100.0));
                sub.add_option("--top-k", a->top_k, "top-k (0: off)")->capture_default_str()->check(CLI::NonNegativeNumber);
                sub.add_option("--top-p", a->top_p, "top-p (1: off)")->capture_default_str()->check(CLI::Range(0.0, 1.0));
                sub.add_option("--seed", a->seed, "sampling seed")->capture_default_str();
                AddEngineOptions(sub, a->engine_args);
                sub.add_flag("--ignore-eos", a->ignore_eos, "do not stop at end-of-generation tokens");
                sub.add_option("--logits-out", a->logits_out, "write the last prompt position's logits (float32)");
                return std::function<int()>([a] {
                  if (a->prompt.empty() && a->prompt_ids.empty()) {
                    std::fprintf(stderr, "error: give --prompt or --prompt-ids\n");
                    return 2;
                  }
                  return ExitCode(Run(*a));
                });
              }}};

}  // namespace
}  // namespace lineage::cli
