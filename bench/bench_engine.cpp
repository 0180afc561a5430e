// bench_engine: the `lineage bench` workload (tools/bench_workload.h) on
// random-weight models built in memory, so it runs with no files.
//   bench_engine                      tiny qwen3_5 and qwen3, f32 and bf16
//   bench_engine SHAPE DTYPE [VOCAB]  one qwen3_5 model of that shape
// Prints a table per model, then all reports as one JSON array.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/bench_workload.h"
#include "tools/model_source.h"

using namespace lineage;

int main(int argc, char** argv) {
  std::vector<engine::ModelSource> sources;
  engine::BenchOptions options;
  if (argc >= 3) {
    engine::ModelSource s;
    s.shape = argv[1];
    s.dtype = argv[2];
    if (argc >= 4) s.vocab = std::atoll(argv[3]);
    sources.push_back(s);
  } else {
    for (const char* arch : {"qwen3_5", "qwen3"}) {
      for (const char* dtype : {"f32", "bf16"}) sources.push_back({"", arch, "tiny", dtype, 0, 1});
    }
    options.prompt_tokens = 128;
    options.gen_tokens = 32;
  }
  nlohmann::json all = nlohmann::json::array();
  for (const engine::ModelSource& s : sources) {
    auto m = engine::OpenModel(s);
    if (!m.ok()) {
      std::fprintf(stderr, "bench_engine: %s\n", m.status().ToString().c_str());
      return 1;
    }
    engine::EngineOptions eo;
    eo.prefill_chunk_tokens = std::max<int64_t>(eo.prefill_chunk_tokens, options.prompt_tokens);
    auto eng = engine::Engine::Create(*m, eo);
    if (!eng.ok()) {
      std::fprintf(stderr, "bench_engine: %s\n", eng.status().ToString().c_str());
      return 1;
    }
    auto r = engine::RunBench(**eng, options);
    if (!r.ok()) {
      std::fprintf(stderr, "bench_engine: %s\n", r.status().ToString().c_str());
      return 1;
    }
    r->model = engine::DescribeModel(**m);
    std::printf("%s\n", r->ToTable().c_str());
    all.push_back(r->ToJson());
  }
  std::printf("%s\n", all.dump().c_str());
  return 0;
}
