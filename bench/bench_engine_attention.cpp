// bench_engine_attention: what attention over the KV cache costs as context
// grows, at the Qwen3.5-0.8B attention shape (6 attention layers, 8 query /
// 2 kv heads of 256 dims; --kv-heads 1: 8 query heads on one), all layers,
// 2 threads, for fp32 and bf16 pages:
//   decode   one query row against 1k..32k tokens of context, next to the
//            time to stream the model's 1434 MiB of bf16 weights at the
//            measured copy bandwidth (the figure behind the KV element type,
//            docs/engine.md);
//   prefill  a run of --rows query rows (a short warm turn: 40) after 20k
//            tokens of context, and a --chunk row prefill chunk there (0: none);
// each with the tiled kernel (AttendGroup; a decode row, or a run of at
// most 64 rows, past two parts of context split by keys, unless --split 0) and the row-at-a-time form it
// replaced (AttendGroupByRows, never split), best of --reps. Beside the wall time, the
// CPU time the process used (both threads): on a machine shared with other
// work the wall time stretches while the CPU time stays the work done.
//
//   bench_engine_attention [--rows 40] [--chunk 512] [--context 20000] [--reps 3] [--by-rows 1]
//                          [--split 1] [--kv-heads 2] [--isa avx2|avx512]
#include <algorithm>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_machine.h"
#include "core/isa.h"
#include "core/roofline.h"
#include "core/thread_pool.h"
#include "engine/paged_attention.h"

using namespace lineage;

namespace {

double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

struct Timing {
  double wall_ms = 1e30, cpu_ms = 1e30;
};

int g_reps = 3;

// Milliseconds of `rows` query rows at positions [ctx - rows, ctx) over every
// layer, run as the attention layer runs them (AttendRuns): with `fn` for the
// unsplit tasks, decode rows split by keys when `split`.
Timing AttentionMs(engine::AttendGroupFn fn, bool split, const cache::PageTable& table, int64_t ctx, int64_t rows,
                   int64_t num_heads, ThreadPool& pool) {
  const cache::KvLayout& layout = table.layout();
  const int64_t q_dim = num_heads * layout.head_dim;
  std::vector<float> q(static_cast<size_t>(rows * q_dim), 0.01f), out(q.size());
  Timing best;
  for (int rep = 0; rep < g_reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuMs();
    for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
      const engine::AttentionRows run{{&table, layer, ctx - rows, num_heads, 0.0625f}, q.data(), out.data(), rows};
      engine::AttendRuns(std::span(&run, 1), &pool, fn, split);
    }
    best.wall_ms =
        std::min(best.wall_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    best.cpu_ms = std::min(best.cpu_ms, CpuMs() - c0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 40, chunk = 512, prefill_ctx = 20000;
  bool by_rows = true, split = true;
  int64_t kv_heads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rows") rows = std::stoll(argv[i + 1]);
    if (k == "--chunk") chunk = std::stoll(argv[i + 1]);
    if (k == "--context") prefill_ctx = std::stoll(argv[i + 1]);
    if (k == "--reps") g_reps = std::max(1, std::stoi(argv[i + 1]));
    if (k == "--by-rows") by_rows = std::string(argv[i + 1]) != "0";
    if (k == "--split") split = std::string(argv[i + 1]) != "0";
    if (k == "--kv-heads") kv_heads = std::clamp<int64_t>(std::stoll(argv[i + 1]), 1, 8);
    if (k == "--isa" && !kernels::ForceIsaByName(argv[i + 1])) {
      std::fprintf(stderr, "--isa %s: unknown or not on this CPU (%s)\n", argv[i + 1], kernels::kIsaNames);
      return 1;
    }
  }
  const int64_t num_heads = 8, max_ctx = 32768;
  if (num_heads % kv_heads != 0) {
    std::fprintf(stderr, "--kv-heads must divide the %lld query heads\n", static_cast<long long>(num_heads));
    return 1;
  }
  ThreadPool pool(2);
  std::printf("bench_engine_attention: cpu %s, isa %s, commit %s, load %s\n", bench::CpuModel().c_str(),
              kernels::IsaName(kernels::ActiveIsa()), bench::Shell("git rev-parse --short HEAD 2>/dev/null").c_str(),
              bench::Shell("cut -d' ' -f1-3 /proc/loadavg").c_str());
  const double weight_bytes = 1434.1 * 1024 * 1024;
  const double bw = MeasureCopyBandwidth(pool);
  std::printf("copy bandwidth %.2f GB/s; weights stream in %.1f ms per token\n", bw / 1e9, 1e3 * weight_bytes / bw);
  std::printf("%-5s %-8s %8s %6s %10s %10s %12s %12s %8s\n", "kv", "run", "context", "rows", "tiled_ms", "tiled_cpu",
              "by_rows_ms", "by_rows_cpu", "cpu_x");
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    cache::KvLayout layout{.num_layers = 6, .num_kv_heads = kv_heads, .head_dim = 256, .page_tokens = 64, .dtype = dtype};
    cache::PageTable table(layout);
    table.Reserve(max_ctx);
    std::vector<float> row(layout.head_dim);
    uint32_t x = 7;
    for (int64_t pos = 0; pos < max_ctx; ++pos) {
      for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
        for (int64_t h = 0; h < layout.num_kv_heads; ++h) {
          for (float& v : row) v = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 1e-8f;
          table.WriteRow(layer, h, pos, row.data(), row.data());
        }
      }
    }
    table.Commit(max_ctx);
    const std::string name(Info(dtype).name);
    auto line = [&](const char* run, int64_t ctx, int64_t n) {
      const Timing tiled = AttentionMs(engine::AttendGroup, split, table, ctx, n, num_heads, pool);
      const Timing rows_form =
          by_rows ? AttentionMs(engine::AttendGroupByRows, false, table, ctx, n, num_heads, pool) : Timing{};
      std::printf("%-5s %-8s %8lld %6lld %10.2f %10.2f %12.2f %12.2f %7.1fx\n", name.c_str(), run,
                  static_cast<long long>(ctx), static_cast<long long>(n), tiled.wall_ms, tiled.cpu_ms,
                  by_rows ? rows_form.wall_ms : 0.0, by_rows ? rows_form.cpu_ms : 0.0,
                  by_rows ? rows_form.cpu_ms / tiled.cpu_ms : 0.0);
      std::printf("{\"bench\":\"engine_attention\",\"kv\":\"%s\",\"run\":\"%s\",\"context\":%lld,\"rows\":%lld,"
                  "\"tiled_ms\":%.3f,\"tiled_cpu_ms\":%.3f,\"by_rows_ms\":%.3f,\"by_rows_cpu_ms\":%.3f}\n",
                  name.c_str(), run, static_cast<long long>(ctx), static_cast<long long>(n), tiled.wall_ms,
                  tiled.cpu_ms, rows_form.wall_ms, rows_form.cpu_ms);
    };
    for (int64_t ctx : {1024, 4096, 16384, 32768}) line("decode", ctx, 1);
    line("prefill", prefill_ctx, rows);
    if (chunk > 0) line("prefill", prefill_ctx, chunk);
  }
  return 0;
}
