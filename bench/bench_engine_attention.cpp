// bench_engine_attention: what the KV cache costs a decode step as context
// grows, at the Qwen3.5-0.8B attention shape (6 attention layers, 8 query /
// 2 kv heads of 256 dims, fp32 pages): one query row per layer against
// contexts of 1k..32k tokens, next to the time to stream the model's
// 1434 MiB of bf16 weights at the measured copy bandwidth. This is the
// figure behind the KV element type (docs/engine.md).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/roofline.h"
#include "core/thread_pool.h"
#include "engine/paged_attention.h"

using namespace lineage;

// Milliseconds of one decode step's attention over `ctx` tokens, all layers.
double AttentionMs(const cache::PageTable& table, int64_t ctx, int64_t num_heads, ThreadPool& pool) {
  const cache::KvLayout& layout = table.layout();
  std::vector<float> q(num_heads * layout.head_dim, 0.01f), out(q.size());
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
      pool.parallel_for(layout.num_kv_heads, [&](int64_t h0, int64_t h1, int) {
        for (int64_t h = h0; h < h1; ++h) {
          const engine::AttentionRun run{&table, layer, ctx - 1, num_heads, 0.0625f};
          engine::AttendGroup(run, h, 0, 1, q.data(), 0, out.data(), 0);
        }
      });
    }
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int main() {
  const int64_t num_heads = 8, max_ctx = 32768;
  ThreadPool pool(2);
  const double weight_bytes = 1434.1 * 1024 * 1024;
  const double bw = MeasureCopyBandwidth(pool);
  std::printf("copy bandwidth %.2f GB/s; weights stream in %.1f ms per token\n", bw / 1e9, 1e3 * weight_bytes / bw);
  std::printf("%6s %8s %14s %12s\n", "kv", "context", "attention_ms", "kv_MiB");
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    cache::KvLayout layout{.num_layers = 6, .num_kv_heads = 2, .head_dim = 256, .page_tokens = 64, .dtype = dtype};
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
    table.Commit(max_ctx - 1);  // the query's own row is the last reserved one
    for (int64_t ctx : {1024, 4096, 16384, 32767}) {
      std::printf("%6s %8lld %14.2f %12.1f\n", std::string(Info(dtype).name).c_str(), static_cast<long long>(ctx),
                  AttentionMs(table, ctx, num_heads, pool),
                  ctx * layout.page_bytes() / layout.page_tokens / (1024.0 * 1024.0));
    }
  }
  return 0;
}
