// bench_kda_rule: the KDA delta rule (core/kda_rule.h) of one Kimi Linear
// layer at the real widths (32 heads, d_k = d_v = 128) over a 512-token
// prefill chunk, one thread, with the strides the engine passes (q, k, v read
// in place from the conv output). Prints milliseconds per layer and per-head
// multiply-adds per second for the recurrence and for the chunked form at
// each chunk size, best of `reps`. Log-decays as a random Kimi layer gives
// them (ssm_a · softplus, about -0.01 .. -3 per token); denormals flushed as
// in the engine's threads.
//
//   build/bench_kda_rule [T] [reps] [form: 0 recurrent, N chunked N; default every one]
#include <xmmintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/kda_rule.h"

using namespace lineage;

int main(int argc, char** argv) {
  const int64_t T = argc > 1 ? std::atoll(argv[1]) : 512;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int64_t d = 128, heads = 32, inner = heads * d, conv_dim = 3 * inner;
  std::vector<float> rows(static_cast<size_t>(T * conv_dim)), g(static_cast<size_t>(T * inner)), beta(T * heads);
  std::vector<float> o(static_cast<size_t>(T * inner)), S(static_cast<size_t>(heads * d * d));
  uint32_t x = 1;
  auto rnd = [&] { return (x = x * 1664525u + 1013904223u) / 4294967296.0f; };
  for (float& v : rows) v = (rnd() - 0.5f) * 0.2f;
  for (float& v : g) v = -0.01f - 3.0f * rnd() * rnd();
  for (float& v : beta) v = 0.5f + 0.5f * rnd();
  _mm_setcsr(_mm_getcsr() | 0x8040);
  // The recurrence's multiply-adds per head and token: decay and S^T k, the
  // update, S^T q: 4 d_k d_v.
  const double macs = 4.0 * d * d * heads * T;
  auto run = [&](int64_t chunk) {
    double best = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
      for (float& s : S) s = 0.0f;
      auto t0 = std::chrono::steady_clock::now();
      for (int64_t h = 0; h < heads; ++h) {
        const float* q = rows.data() + h * d;
        const float* k = rows.data() + inner + h * d;
        const float* v = rows.data() + 2 * inner + h * d;
        float* Sh = S.data() + h * d * d;
        if (chunk == 0) {
          kernels::KdaRecurrent(q, k, conv_dim, v, conv_dim, g.data() + h * d, inner, beta.data() + h, heads, T, d, d,
                                Sh, o.data() + h * d, inner);
        } else {
          kernels::KdaChunked(q, k, conv_dim, v, conv_dim, g.data() + h * d, inner, beta.data() + h, heads, T, d, d,
                              Sh, o.data() + h * d, inner, chunk);
        }
      }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  std::printf("KDA layer, %lld heads x %lldx%lld, T = %lld, one thread, best of %d\n", static_cast<long long>(heads),
              static_cast<long long>(d), static_cast<long long>(d), static_cast<long long>(T), reps);
  std::printf("%-12s %10s %14s\n", "form", "ms/layer", "GMAC/s (4dd)");
  std::vector<int64_t> forms = {0, 16, 32, 64};
  if (argc > 3) forms = {std::atoll(argv[3])};
  for (int64_t chunk : forms) {
    double s = run(chunk);
    char name[32];
    std::snprintf(name, sizeof name, chunk ? "chunked %lld" : "recurrent", static_cast<long long>(chunk));
    std::printf("%-12s %10.1f %14.2f\n", name, s * 1e3, macs / s / 1e9);
  }
  return 0;
}
