// bench_server_turn: a warm short turn on a long context through the
// server's scheduler (DESIGN.md §2, §3.6), against the same turn cold.
//
// Turn 1 is a cold prompt of --context tokens; each warm turn repeats the
// previous prompt and adds --suffix new tokens, so it restores the whole of
// the previous turn from the cache and prefills only the suffix (--warm
// turns of them, to see the spread on a busy machine; the median is the
// figure). Time to first token is split into admission (restore: share KV
// pages, copy the recurrent state), prefill, commit and the rest (queueing,
// sampling). The design's target: admission + commit under 2% of the warm
// turn's time to first token. Last, the final warm prompt again with its
// first token changed, so nothing is cached: the same turn, cold (--cold 0
// skips it).
//
//   bench_server_turn [--shape qwen3.5-0.8b] [--context 20000] [--suffix 40] [--threads 2]
//                     [--warm 3] [--cold 1] [--kv-type f32|bf16]
//                     [--pool-words 4000] [--front-only 1]
#include <sys/resource.h>
#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <thread>

#include "cache/lineage_cache.h"
#include "engine/engine.h"
#include "tools/model_source.h"
#include "tools/chat_templates.h"
#include "server/generation/prompt_builder.h"
#include "server/generation/scheduler.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"

using namespace lineage;

namespace {

// CPU time of the whole process (every thread), ms. On a machine shared with
// other work the wall times stretch; the CPU time of a turn stays its work.
double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

struct Turn {
  server::RequestReport report;
  double cpu_ms = 0;
};

server::RequestReport RunTurn(server::Scheduler& s, std::vector<int32_t> prompt) {
  server::Job job;
  job.prompt = std::move(prompt);
  job.max_tokens = 1;
  job.stream = std::make_shared<server::GenerationStream>();
  auto stream = job.stream;
  Status st = s.Enqueue(std::move(job));
  if (!st.ok()) {
    std::fprintf(stderr, "enqueue: %s\n", st.ToString().c_str());
    std::exit(1);
  }
  for (;;) {
    bool got = false;
    server::GenerationItem item = stream->Pull(std::chrono::milliseconds(1000), &got);
    if (item.done) {
      if (item.finish == server::FinishReason::kError) {
        std::fprintf(stderr, "error: %s\n", item.error.ToString().c_str());
        std::exit(1);
      }
      return item.report;
    }
  }
}

std::string Commit() {
  std::FILE* p = ::popen("git rev-parse --short HEAD 2>/dev/null", "r");
  char buf[64] = "unknown";
  if (p) {
    if (!std::fgets(buf, sizeof buf, p)) std::strcpy(buf, "unknown");
    ::pclose(p);
  }
  std::string s = buf;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

Turn TimedTurn(server::Scheduler& s, const std::vector<int32_t>& prompt) {
  const double c0 = CpuMs();
  Turn t;
  t.report = RunTurn(s, prompt);
  t.cpu_ms = CpuMs() - c0;
  return t;
}

// The work a chat request costs before it reaches the scheduler (and so
// before the scheduler's clock starts): rendering the Qwen3.5 template,
// tokenizing, the anchor and the history end (PromptBuilder::Build), for a
// conversation of about `context` tokens. Median of 5 after one run that
// fills the anchor memo, in ms.
double FrontEndMs(int64_t vocab, int64_t context, int64_t pool_words, int64_t* num_tokens) {
  auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(vocab, text::VocabFlavour::kQwen35, 1));
  auto tmpl = ChatTemplate::Create(model::ChatTemplateFor(model::Arch::kQwen3_5), "", "<|im_end|>");
  if (!tok.ok() || !tmpl.ok()) return -1;
  server::PromptBuilder builder(*tok, std::move(tmpl).value());
  std::mt19937 rng(7);
  // Words drawn from a pool of `pool_words` random words: real text repeats
  // words (the tokenizer's word cache helps); a large pool is the worst case.
  std::vector<std::string> words(static_cast<size_t>(pool_words));
  for (std::string& w : words) {
    int n = 2 + static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) w += static_cast<char>('a' + rng() % 26);
    if (rng() % 8 == 0) w += "()";
  }
  auto text = [&](int n) {
    std::string t;
    for (int i = 0; i < n; ++i) t += words[rng() % words.size()] + (i % 17 == 16 ? "\n" : " ");
    return t;
  };
  server::ApiRequest req;
  req.messages.push_back({{"role", "system"}, {"content", text(2000)}});
  Result<server::BuiltPrompt> built = InvalidArgument("empty");
  do {
    req.messages.push_back({{"role", "user"}, {"content", text(300)}});
    req.messages.push_back({{"role", "assistant"}, {"content", text(500)}});
    req.messages.push_back({{"role", "user"}, {"content", "next"}});
    built = builder.Build(req);
    if (!built.ok()) return -1;
    req.messages.erase(req.messages.end() - 1);
  } while (static_cast<int64_t>(built->tokens.size()) < context);
  req.messages.push_back({{"role", "user"}, {"content", "next"}});
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    built = builder.Build(req);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  *num_tokens = static_cast<int64_t>(built->tokens.size());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void PrintFrontEnd(int64_t tokens, int64_t pool_words, double ms) {
  std::printf("front end (template render + tokenize + anchor + history end) of a %lld-token chat, words from a "
              "pool of %lld: %.2f ms\n",
              static_cast<long long>(tokens), static_cast<long long>(pool_words), ms);
}

void Row(const char* name, const Turn& turn) {
  const server::RequestReport& r = turn.report;
  double ttft = r.first_token_us / 1e3, adm = r.admission_us / 1e3, pre = r.prefill_us / 1e3, com = r.commit_us / 1e3;
  std::printf("%-6s %8lld %8lld %10.1f %10.3f %10.1f %10.3f %10.1f %8.3f%% %10.1f\n", name,
              static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.cached_tokens), ttft, adm, pre, com,
              ttft - adm - pre - com, ttft > 0 ? 100.0 * (adm + com) / ttft : 0.0, turn.cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape = "qwen3.5-0.8b";
  int64_t context = 20000, suffix = 40;
  int threads = 2, warm_turns = 3;
  bool run_cold = true;
  bool front_only = false;     // only the front-end figure (no model run)
  int64_t pool_words = 4000;
  DType kv_dtype = DType::kF32;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--shape") shape = v;
    else if (k == "--context") context = std::stoll(v);
    else if (k == "--suffix") suffix = std::stoll(v);
    else if (k == "--threads") threads = std::stoi(v);
    else if (k == "--warm") warm_turns = std::max(1, std::stoi(v));
    else if (k == "--cold") run_cold = v != "0";
    else if (k == "--kv-type" && ParseDType(v)) kv_dtype = *ParseDType(v);
    else if (k == "--front-only") front_only = v != "0";
    else if (k == "--pool-words") pool_words = std::max<int64_t>(1, std::stoll(v));
  }
  utsname u{};
  ::uname(&u);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("bench_server_turn: %s %s, %u hardware threads, %d compute threads, build %s, commit %s\n", u.sysname,
              u.machine, std::thread::hardware_concurrency(), threads,
#ifdef NDEBUG
              "release",
#else
              "debug",
#endif
              Commit().c_str());
  engine::ModelSource src;
  src.shape = shape;
  src.arch = "qwen3_5";
  src.dtype = "bf16";
  auto model = engine::OpenModel(src);
  if (!model.ok()) {
    std::fprintf(stderr, "model: %s\n", model.status().ToString().c_str());
    return 1;
  }
  std::printf("model: %s\n", engine::DescribeModel(**model).c_str());
  if (front_only) {
    int64_t tokens = 0;
    const double ms = FrontEndMs((*model)->config.vocab, context, pool_words, &tokens);
    PrintFrontEnd(tokens, pool_words, ms);
    return 0;
  }
  engine::EngineOptions eo;
  eo.num_threads = threads;
  eo.kv_dtype = kv_dtype;
  std::printf("kv pages: %s\n", std::string(Info(kv_dtype).name).c_str());
  auto engine = engine::Engine::Create(*model, eo);
  if (!engine.ok()) return 1;
  cache::CacheOptions co;
  co.ram_budget_bytes = int64_t{16} << 30;
  cache::LineageCache cache(co);
  // Only end-of-generation checks use the tokenizer here; prompts are ids.
  auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(4096, text::VocabFlavour::kQwen35, 1));
  server::SchedulerOptions so;
  so.context_tokens = context + warm_turns * suffix + 16;
  so.prefill_chunk_tokens = 512;
  server::Scheduler scheduler(engine->get(), &cache, *tok, so);

  std::mt19937 rng(1);
  const int32_t vocab = static_cast<int32_t>((*model)->config.vocab);
  std::uniform_int_distribution<int32_t> id(vocab / 8, vocab - vocab / 8);  // clear of special ids
  std::vector<int32_t> prompt(context);
  for (auto& t : prompt) t = id(rng);

  std::printf("%-6s %8s %8s %10s %10s %10s %10s %10s %9s %10s\n", "turn", "prompt", "cached", "ttft_ms", "admit_ms",
              "prefill_ms", "commit_ms", "rest_ms", "adm+com", "cpu_ms");
  Row("first", TimedTurn(scheduler, prompt));
  std::vector<Turn> warms;
  for (int w = 0; w < warm_turns; ++w) {
    for (int64_t i = 0; i < suffix; ++i) prompt.push_back(id(rng));
    warms.push_back(TimedTurn(scheduler, prompt));
    Row("warm", warms.back());
  }
  std::sort(warms.begin(), warms.end(),
            [](const Turn& a, const Turn& b) { return a.report.first_token_us < b.report.first_token_us; });
  const server::RequestReport warm = warms[warms.size() / 2].report;
  Row("median", warms[warms.size() / 2]);
  Turn cold_turn;
  if (run_cold) {
    prompt[0] = prompt[0] == vocab / 8 ? vocab / 8 + 1 : vocab / 8;  // shares nothing with the cache: the same turn, cold
    cold_turn = TimedTurn(scheduler, prompt);
    Row("cold", cold_turn);
  }
  const server::RequestReport& cold = cold_turn.report;
  int64_t front_tokens = 0;
  const double front_ms = FrontEndMs(vocab, context, pool_words, &front_tokens);
  const double warm_ms = warm.first_token_us / 1e3;
  PrintFrontEnd(front_tokens, pool_words, front_ms);
  std::printf("warm turn as a client sees it: %.1f ms = front %.2f + admission %.2f + prefill %.1f + commit %.2f + "
              "rest %.2f; admission + commit = %.2f%%\n",
              front_ms + warm_ms, front_ms, warm.admission_us / 1e3, warm.prefill_us / 1e3, warm.commit_us / 1e3,
              warm_ms - (warm.admission_us + warm.prefill_us + warm.commit_us) / 1e3,
              100.0 * (warm.admission_us + warm.commit_us) / 1e3 / (front_ms + warm_ms));
  std::printf("{\"bench\":\"server_turn\",\"shape\":\"%s\",\"context\":%lld,\"suffix\":%lld,\"warm_ttft_ms\":%.3f,"
              "\"warm_admission_ms\":%.3f,\"warm_commit_ms\":%.3f,\"cold_ttft_ms\":%.3f,\"admission_commit_share\":%.5f,"
              "\"warm_cpu_ms\":%.3f,\"cold_cpu_ms\":%.3f,\"front_ms\":%.3f}\n",
              shape.c_str(), static_cast<long long>(context), static_cast<long long>(suffix), warm.first_token_us / 1e3,
              warm.admission_us / 1e3, warm.commit_us / 1e3, cold.first_token_us / 1e3,
              warm.first_token_us > 0 ? double(warm.admission_us + warm.commit_us) / warm.first_token_us : 0.0,
              warms[warms.size() / 2].cpu_ms, cold_turn.cpu_ms, front_ms);
  return 0;
}
