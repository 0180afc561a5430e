// `lineage bench`: prefill and decode speed of a model against the machine's
// rooflines measured in the same run (engine/bench_workload.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "engine/bench_workload.h"
#include "engine/model_source.h"

namespace lineage::cli {
namespace {

struct BenchArgs {
  engine::ModelSource source;
  engine::BenchOptions options;
  int threads = 2;
  bool json = false;
};

Status Run(const BenchArgs& a) {
  LINEAGE_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> m, engine::OpenModel(a.source));
  engine::EngineOptions eo;
  eo.num_threads = a.threads;
  eo.prefill_chunk_tokens = std::max<int64_t>(eo.prefill_chunk_tokens, a.options.prompt_tokens);
  LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> eng, engine::Engine::Create(m, eo));
  LINEAGE_ASSIGN_OR_RETURN(engine::BenchReport r, engine::RunBench(*eng, a.options));
  r.model = engine::DescribeModel(*m);
  if (a.json) {
    std::printf("%s\n", r.ToJson().dump(2).c_str());
  } else {
    std::printf("%s", r.ToTable().c_str());
  }
  return Status::Ok();
}

Register reg{{"bench", "Measure prefill and decode speed against the machine's rooflines", [](CLI::App& sub) {
                auto a = std::make_shared<BenchArgs>();
                sub.add_option("--model", a->source.path, "model file (.gguf) or Hugging Face directory");
                sub.add_option("--shape", a->source.shape, "instead of --model: a random-weight model built in memory");
                sub.add_option("--arch", a->source.arch, "with --shape: qwen3_5 or qwen3")->capture_default_str();
                sub.add_option("--dtype", a->source.dtype, "with --shape: f32, f16, bf16 or q8_0")->capture_default_str();
                sub.add_option("--vocab", a->source.vocab, "with --shape: vocabulary size override");
                sub.add_option("--prompt", a->options.prompt_tokens, "prompt tokens")->capture_default_str();
                sub.add_option("--gen", a->options.gen_tokens, "decoded tokens")->capture_default_str();
                sub.add_option("--threads", a->threads, "threads")->capture_default_str();
                sub.add_flag("--json", a->json, "print JSON instead of a table");
                return std::function<int()>([a] {
                  Status st = Run(*a);
                  if (!st.ok()) {
                    std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
                    return 1;
                  }
                  return 0;
                });
              }}};

}  // namespace
}  // namespace lineage::cli
