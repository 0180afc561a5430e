// `lineage bench`: prefill and decode speed of a model against the machine's
// rooflines measured in the same run (tools/bench_workload.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/model_options.h"
#include "tools/bench_workload.h"
#include "tools/model_source.h"

namespace lineage::cli {
namespace {

struct BenchArgs {
  engine::ModelSource source;
  engine::BenchOptions options;
  EngineArgs engine_args;
  int64_t delta_chunked_min_tokens = engine::EngineOptions{}.delta_chunked_min_tokens;
  bool json = false;
};

Status Run(const BenchArgs& a) {
  LINEAGE_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> m, engine::OpenModel(a.source));
  engine::EngineOptions eo = EngineOptionsFrom(a.engine_args);
  eo.delta_chunked_min_tokens = a.delta_chunked_min_tokens;
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
                AddModelOptions(sub, a->source);
                sub.add_option("--prompt", a->options.prompt_tokens, "prompt tokens")->capture_default_str();
                sub.add_option("--gen", a->options.gen_tokens, "decoded tokens")->capture_default_str();
                sub.add_option("--depth", a->options.depth_tokens,
                               "context tokens laid down (untimed) before the timed prompt, as llama-bench -d")
                    ->capture_default_str();
                AddEngineOptions(sub, a->engine_args);
                sub.add_option("--delta-chunked-min", a->delta_chunked_min_tokens,
                               "GDN runs of at least this many tokens use the chunked delta rule")
                    ->capture_default_str();
                sub.add_flag("--compare-exact", a->options.compare_exact,
                             "also decode with fp32 activations for every block type (the exact path) and print "
                             "the ratio");
                sub.add_flag("--json", a->json, "print JSON instead of a table");
                return std::function<int()>([a] {
                  return ExitCode(Run(*a));
                });
              }}};

}  // namespace
}  // namespace lineage::cli
