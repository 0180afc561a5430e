// Tokenizer throughput: encodes a few MB of mixed English, code, JSON and
// CJK text and reports MB/s per thread, for a real vocabulary (GPT-2, from
// the shared data) and the synthetic Qwen3.5 one (248320 tokens, NFC and
// the Qwen3.5 regex). "cold" is the first pass (empty word cache), "warm"
// the best of the next ones. Prints the machine, build and commit, a table,
// then one JSON line.
//
// Usage: bench_tokenizer [MB] [threads]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/synthetic_corpus.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "bench_machine.h"

using lineage::bench::Shell;

using namespace lineage;
using namespace lineage::text;

namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
};

// Mixed text that is not the synthetic vocabulary's training corpus: made-up
// words and identifiers, numbers, code lines and CJK ideographs mixed with
// prose, so the word cache sees a realistic share of new words.
std::string MakeText(size_t bytes) {
  Rng r{0x1234567};
  std::string prose = SyntheticCorpus(99, 256 * 1024);
  static const char* kSyll[] = {"ka", "lo", "mi", "tre", "son", "ver", "qu", "ax", "bel", "dor", "fin", "gra",
                                "hu", "jen", "pro", "ly", "st", "ing", "tion", "ed"};
  std::string out;
  out.reserve(bytes + 1024);
  while (out.size() < bytes) {
    switch (r.Next() % 8) {
      case 0:
      case 1:
      case 2: {
        size_t at = r.Next() % (prose.size() - 2048);
        while (at > 0 && (static_cast<unsigned char>(prose[at]) & 0xC0) == 0x80) --at;  // start on a character
        size_t len = 256 + r.Next() % 1024;
        while (at + len < prose.size() && (static_cast<unsigned char>(prose[at + len]) & 0xC0) == 0x80) ++len;
        out.append(prose, at, len);
        break;
      }
      case 3:
      case 4:
        for (int w = 0; w < 12; ++w) {
          out += ' ';
          for (uint64_t k = 1 + r.Next() % 4; k > 0; --k) out += kSyll[r.Next() % 20];
          if (r.Next() % 7 == 0) out += ",";
        }
        out += ". ";
        break;
      case 5:
        out += "    let v" + std::to_string(r.Next() % 100000) + " = compute_" + kSyll[r.Next() % 20] +
               kSyll[r.Next() % 20] + "(x[" + std::to_string(r.Next() % 512) + "], 0x" +
               std::to_string(r.Next() % 0xFFFF) + ");\n";
        break;
      case 6:
        out += "{\"id\": " + std::to_string(r.Next() % 1000000) + ", \"key_" + kSyll[r.Next() % 20] +
               "\": [1.5, 2.25, \"" + kSyll[r.Next() % 20] + "\"]}\n";
        break;
      default:
        for (int k = 0; k < 40; ++k) AppendUtf8(0x4E00 + static_cast<char32_t>(r.Next() % 3500), &out);
        out += "。\n";
        break;
    }
  }
  return out;
}

struct Figures {
  double cold_mb_s = 0, warm_mb_s = 0;  // wall clock
  double cold_cpu_mb_s = 0, warm_cpu_mb_s = 0;  // thread CPU time: not distorted by a loaded machine
  size_t num_tokens = 0;
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Each thread encodes its own copy of the text `passes` times.
Figures Run(const Tokenizer& tok, const std::string& text, int threads, int passes) {
  std::vector<std::vector<double>> seconds(threads), cpu_seconds(threads);
  std::vector<size_t> tokens(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int p = 0; p < passes; ++p) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = ThreadCpuSeconds();
        std::vector<TokenId> ids = tok.Encode(text);
        cpu_seconds[t].push_back(ThreadCpuSeconds() - c0);
        seconds[t].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        tokens[t] = ids.size();
      }
    });
  }
  for (auto& th : pool) th.join();
  Figures f;
  double mb = text.size() / 1e6;
  for (int t = 0; t < threads; ++t) {
    f.cold_mb_s += mb / seconds[t][0] / threads;
    double best = seconds[t][1], best_cpu = cpu_seconds[t][1];
    for (int p = 2; p < passes; ++p) best = std::min(best, seconds[t][p]), best_cpu = std::min(best_cpu, cpu_seconds[t][p]);
    f.warm_mb_s += mb / best / threads;
    f.warm_cpu_mb_s += mb / best_cpu / threads;
    f.cold_cpu_mb_s += mb / cpu_seconds[t][0] / threads;
  }
  f.num_tokens = tokens[0];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = argc > 1 ? std::atof(argv[1]) : 4.0;
  int max_threads = argc > 2 ? std::atoi(argv[2]) : 2;
  std::string text = MakeText(static_cast<size_t>(mb * 1e6));
  std::string src_dir = std::filesystem::path(__FILE__).parent_path().string();
  std::string cpu = Shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2");
  std::string commit = Shell("git -C '" + src_dir + "' rev-parse --short HEAD 2>/dev/null");
#ifdef NDEBUG
  const char* build = "release";
#else
  const char* build = "debug";
#endif
  std::printf("bench_tokenizer  cpu:%s  cores:%u  build:%s  commit:%s\n", cpu.c_str(),
              std::thread::hardware_concurrency(), build, commit.c_str());
  std::printf("text: %.2f MB mixed English/code/JSON/CJK\n\n", text.size() / 1e6);

  struct Named {
    std::string name;
    Result<Tokenizer> tok;
  };
  std::vector<Named> toks;
  std::string gpt2 = src_dir + "/../../shared/data/vocab/ggml-vocab-gpt-2.gguf";
  if (std::filesystem::exists(gpt2)) toks.push_back({"gpt-2 (gguf)", LoadTokenizer(gpt2)});
  auto t0 = std::chrono::steady_clock::now();
  toks.push_back({"synthetic qwen35 248320", Tokenizer::FromVocabData(MakeSyntheticVocab(248320, VocabFlavour::kQwen35, 1))});
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("synthetic 248320-token vocabulary + tokenizer built in %.2f s\n\n", build_s);

  std::printf("%s\n", Shell("uptime").c_str());
  std::printf("MB/s per thread: cold = first pass, warm = best later pass; wall clock, then by thread CPU time\n");
  std::printf("%-26s %8s %10s %10s %10s %10s %10s %12s\n", "tokenizer", "threads", "tokens", "cold", "warm",
              "cold cpu", "warm cpu", "bytes/token");
  std::string json = "{\"bench\":\"tokenizer\",\"commit\":\"" + commit + "\",\"text_mb\":" + std::to_string(text.size() / 1e6) +
                     ",\"synthetic_build_s\":" + std::to_string(build_s) + ",\"results\":[";
  bool first = true;
  for (auto& [name, tok] : toks) {
    if (!tok.ok()) {
      std::printf("%-26s failed to load: %s\n", name.c_str(), tok.status().ToString().c_str());
      continue;
    }
    for (int threads = 1; threads <= max_threads; threads *= 2) {
      // Each row runs on new threads, and the word cache is per thread: every
      // row's first pass starts cold.
      Figures f = Run(*tok, text, threads, 4);
      std::printf("%-26s %8d %10zu %10.1f %10.1f %10.1f %10.1f %12.2f\n", name.c_str(), threads, f.num_tokens,
                  f.cold_mb_s, f.warm_mb_s, f.cold_cpu_mb_s, f.warm_cpu_mb_s, double(text.size()) / f.num_tokens);
      json += std::string(first ? "" : ",") + "{\"tokenizer\":\"" + name + "\",\"threads\":" + std::to_string(threads) +
              ",\"tokens\":" + std::to_string(f.num_tokens) + ",\"cold_mb_s_per_thread\":" +
              std::to_string(f.cold_mb_s) + ",\"warm_mb_s_per_thread\":" + std::to_string(f.warm_mb_s) +
              ",\"cold_cpu_mb_s_per_thread\":" + std::to_string(f.cold_cpu_mb_s) + ",\"warm_cpu_mb_s_per_thread\":" + std::to_string(f.warm_cpu_mb_s) + "}";
      first = false;
    }
  }
  json += "]";
  // What a request waits for: one 100k-token prompt, encoded by a tokenizer
  // whose word cache is still cold on this thread.
  for (auto& [name, tok] : toks) {
    if (!tok.ok()) continue;
    Tokenizer fresh = *tok;
    auto rebuilt = name.rfind("gpt-2", 0) == 0 ? LoadTokenizer(gpt2)
                                              : Tokenizer::FromVocabData(MakeSyntheticVocab(248320, VocabFlavour::kQwen35, 1));
    if (rebuilt.ok()) fresh = *rebuilt;  // a new tokenizer: nothing cached for it yet
    std::string prompt = text.substr(0, std::min(text.size(), size_t(100000 * 3.3)));
    double c0 = ThreadCpuSeconds();
    size_t n = fresh.Encode(prompt).size();
    double ms = (ThreadCpuSeconds() - c0) * 1e3;
    std::printf("%-26s %zu-token prompt (%.0f KB), cold cache: %.1f ms CPU\n", name.c_str(), n, prompt.size() / 1e3, ms);
    json += ",\"prompt_100k_cold_ms_" + std::string(name.rfind("gpt-2", 0) == 0 ? "gpt2" : "synthetic") +
            "\":" + std::to_string(ms);
  }
  json += "}";
  std::printf("\n%s\n", json.c_str());
  return 0;
}
