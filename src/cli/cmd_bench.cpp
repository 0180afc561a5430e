// `lineage bench`: prefill and decode speed of a model against the machine's
// rooflines measured in the same run (tools/bench_workload.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/model_options.h"
#include "tools/bench_workload.h"
#include "tools/spec_bench.h"
#include "tools/model_source.h"

namespace lineage::cli {
namespace {

struct BenchArgs {
  engine::ModelSource source;
  engine::BenchOptions options;
  EngineArgs engine_args;
  int64_t delta_chunked_min_tokens = engine::EngineOptions{}.delta_chunked_min_tokens;
  bool json = false;
  bool spec = false;
  bool spec_mtp = false;
  engine::SpecBenchOptions spec_options;
};

template <typename Report>
void Print(const Report& r, bool json) {
  if (json) {
    std::printf("%s\n", r.ToJson().dump(2).c_str());
  } else {
    std::printf("%s", r.ToTable().c_str());
  }
}

Status Run(const BenchArgs& a) {
  LINEAGE_RETURN_IF_ERROR(ApplyIsa(a.engine_args));
  LINEAGE_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> m, engine::OpenModel(a.source));
  engine::EngineOptions eo = EngineOptionsFrom(a.engine_args);
  eo.delta_chunked_min_tokens = a.delta_chunked_min_tokens;
  eo.prefill_chunk_tokens = std::max<int64_t>(eo.prefill_chunk_tokens, a.options.prompt_tokens);
  LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> eng, engine::Engine::Create(m, eo));
  if (a.spec) {
    engine::SpecBenchOptions so = a.spec_options;
    so.prompt_tokens = a.options.prompt_tokens;
    so.gen_tokens = a.options.gen_tokens;
    std::unique_ptr<engine::Engine> mtp;
    if (a.spec_mtp) {
      eo.mtp = true;
      LINEAGE_ASSIGN_OR_RETURN(mtp, engine::Engine::Create(m, eo));
    }
    LINEAGE_ASSIGN_OR_RETURN(engine::SpecBenchReport r, engine::RunSpecBench(*eng, so, mtp.get()));
    r.model = engine::DescribeModel(*m);
    Print(r, a.json);
    return Status::Ok();
  }
  LINEAGE_ASSIGN_OR_RETURN(engine::BenchReport r, engine::RunBench(*eng, a.options));
  r.model = engine::DescribeModel(*m);
  Print(r, a.json);
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
                sub.add_option("--batch", a->options.batch,
                               "also time decode steps of this many sequences at once, each after the prompt")
                    ->check(CLI::Range(0, 256));
                AddEngineOptions(sub, a->engine_args);
                sub.add_option("--delta-chunked-min", a->delta_chunked_min_tokens,
                               "GDN runs of at least this many tokens use the chunked delta rule")
                    ->capture_default_str();
                sub.add_flag("--compare-exact", a->options.compare_exact,
                             "also decode with fp32 activations for every block type (the exact path) and print "
                             "the ratio");
                sub.add_flag("--json", a->json, "print JSON instead of a table");
                sub.add_flag("--spec", a->spec,
                             "speculative decoding instead: decode speed with drafts against without, the drafts "
                             "taken from a greedy record and each wrong with chance 1 - rate (tools/spec_bench.h)");
                sub.add_flag("--mtp", a->spec_mtp,
                             "with --spec: drafted runs pay for the model's MTP block drafting each round, and one "
                             "more run drafts with it (tools/spec_bench.h)");
                sub.add_option("--draft-max", a->spec_options.drafts, "with --spec: drafts per round")
                    ->capture_default_str();
                sub.add_option("--draft-rate", a->spec_options.acceptance,
                               "with --spec: the chances that a draft is right, one run each")
                    ->delimiter(',')
                    ->capture_default_str();
                sub.add_option("--repeats", a->spec_options.repeats, "with --spec: runs of each, the best kept")
                    ->capture_default_str();
                return std::function<int()>([a] {
                  return ExitCode(Run(*a));
                });
              }}};

}  // namespace
}  // namespace lineage::cli
