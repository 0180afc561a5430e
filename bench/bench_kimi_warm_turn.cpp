// bench_kimi_warm_turn: what one Kimi Linear layer costs in a warm turn — a
// run of T new tokens after C tokens of context — at the real layer widths
// (kimi-linear-48b-a3b: hidden 2304, MLA 32 heads with the 512 + 64 latent,
// KDA 32 heads of 128). The origin document measured 39 ms per MLA layer for
// a 40-token turn after 20k tokens, 29 of them expanding the whole latent
// cache into per-head keys and values; here no step expands it, so the MLA
// time must grow with T x C (the attention itself) and nothing else.
//
// The context is laid down without computing it (random latent rows in the
// pages, a random KDA state): a layer's work does not depend on the values.
// The FFN is not timed. Prints ms per layer for each (C, T), with C = 0 as
// the cold reference, and the MLA attention's multiply-adds per second.
// Beside the wall time, the process CPU time of the same call (all threads):
// on a machine shared with other work the wall time is an upper bound, and
// multiply-adds per CPU-second show the kernels' own speed. The last line
// is the ceiling: one f32 Gemm of the attention's shape (1280 queries x 576
// against 4096 latent rows) timed the same way.
//   bench_kimi_warm_turn [threads [context T]]   (context and T: that case only)
#include <xmmintrin.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine/engine.h"
#include "core/kernels.h"
#include "engine/layers.h"
#include "tools/random_model.h"
#include "model/shapes.h"

using namespace lineage;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  auto spec = model::LookupShape(model::Arch::kKimiLinear, "kimi-linear-48b-a3b", 4096);
  if (!spec.ok()) return 1;
  auto cut = model::CutLayers(*spec, 4);  // KDA, KDA, KDA, MLA
  if (!cut.ok()) return 1;
  cut->config.experts.count = 8;  // the FFN is not timed; 256 experts would not fit in RAM
  auto m = model::MakeRandomModel(*cut, DType::kBF16, 1);
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
    return 1;
  }
  const model::ModelConfig& c = (*m)->config;
  engine::EngineOptions o;
  o.num_threads = threads;
  auto e = engine::Engine::Create(*m, o);
  if (!e.ok()) return 1;
  engine::Engine& eng = **e;
  _mm_setcsr(_mm_getcsr() | 0x8040);
  const int64_t H = c.hidden, W = c.mla.latent_dim();
  uint32_t x = 1;
  auto rnd = [&] { return (x = x * 1664525u + 1013904223u) / 4294967296.0f - 0.5f; };
  std::printf("kimi-linear-48b-a3b widths, bf16 weights, fp32 pages, %d threads\n", threads);
  std::printf("%8s %6s %10s %10s %10s %10s %12s %14s\n", "context", "T", "MLA_ms", "MLA_cpu_ms", "KDA_ms",
              "KDA_cpu_ms", "MLA_GMAC/s", "MLA_GMAC/cpu_s");
  auto cpu_ms = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
  };
  std::vector<int64_t> contexts = {0, 20000}, runs = {1, 40, 512};
  if (argc > 3) {
    contexts = {std::atoll(argv[2])};
    runs = {std::atoll(argv[3])};
  }
  for (int64_t C : contexts) {
    for (int64_t T : runs) {
      engine::Sequence seq = eng.NewSequence();
      std::vector<float> row(static_cast<size_t>(W));
      if (C > 0) {
        seq.kv().Reserve(C);
        for (int64_t p = 0; p < C; ++p) {
          for (float& v : row) v = rnd();
          seq.kv().WriteRow(0, 0, p, row.data(), row.data() + W / 2);
        }
        seq.kv().Commit(C);
      }
      for (int64_t i = 0; i < seq.recurrent().layout().total_floats(); ++i)
        seq.recurrent().mutable_data()[i] = 0.01f * rnd();
      std::vector<int32_t> tokens(static_cast<size_t>(T), 7);
      engine::Batch batch;
      batch.Add(&seq, tokens.data(), T);
      engine::Workspace ws;
      ws.Ensure(c, T);
      std::vector<float> xn(static_cast<size_t>(T * H)), out(static_cast<size_t>(T * H));
      for (float& v : xn) v = rnd();
      const engine::StepContext ctx{c, batch, ws, &eng.pool(), 8};
      seq.kv().Reserve(T);
      double best[2] = {1e30, 1e30}, best_cpu[2] = {1e30, 1e30};
      for (int rep = 0; rep < 3; ++rep) {
        for (int kind = 0; kind < 2; ++kind) {
          const auto t0 = std::chrono::steady_clock::now();
          const double c0 = cpu_ms();
          if (kind == 0) {
            engine::LatentAttention((*m)->weights.layers[3].mla, 0, -1, (*m)->config.sparse(), ctx, xn.data(), out.data());
          } else {
            engine::KimiDeltaAttention((*m)->weights.layers[1].kda, 1, ctx, xn.data(), out.data());
          }
          const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          best[kind] = std::min(best[kind], ms);
          best_cpu[kind] = std::min(best_cpu[kind], cpu_ms() - c0);
        }
      }
      // Attention multiply-adds: every row attends C + its index keys, per
      // head a score (W) and an accumulation (L).
      const double keys = static_cast<double>(T) * static_cast<double>(C) + T * (T + 1) / 2.0;
      const double macs = keys * static_cast<double>(c.num_heads) * static_cast<double>(W + c.mla.kv_lora_rank);
      std::printf("%8lld %6lld %10.2f %10.2f %10.2f %10.2f %12.2f %14.2f\n", static_cast<long long>(C),
                  static_cast<long long>(T), best[0], best_cpu[0], best[1], best_cpu[1], macs / (best[0] * 1e-3) / 1e9,
                  macs / (best_cpu[0] * 1e-3) / 1e9);
    }
  }
  {  // the Gemm ceiling at the attention's shape
    const int64_t M = 40 * c.num_heads, N = 4096;
    std::vector<float> rows(static_cast<size_t>(N * W)), q(static_cast<size_t>(M * W)), y(static_cast<size_t>(M * N));
    for (float& v : rows) v = rnd();
    for (float& v : q) v = rnd();
    const TensorView w{"rows", DType::kF32, {N, W}, rows.data(), N * W * 4};
    double best = 1e30, best_cpu = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_ms();
      kernels::Gemm(w, q.data(), W, y.data(), N, M, &eng.pool());
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      best_cpu = std::min(best_cpu, cpu_ms() - c0);
    }
    const double macs = static_cast<double>(M) * N * W;
    std::printf("Gemm f32 %lld x %lld x %lld: %.2f ms, %.2f cpu ms, %.2f GMAC/s, %.2f GMAC/cpu_s\n",
                static_cast<long long>(M), static_cast<long long>(W), static_cast<long long>(N), best, best_cpu,
                macs / (best * 1e-3) / 1e9, macs / (best_cpu * 1e-3) / 1e9);
  }
  return 0;
}
