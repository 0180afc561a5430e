// bench_engine_gdn: which delta-rule form the engine should use for a GDN run
// of T tokens (EngineOptions::delta_chunked_min_tokens). Times the
// recurrence and the chunked form on one Qwen3.5 head (d_k = d_v = 128) with
// the strides the engine passes (q/k/v read in place from the conv output of
// a 16-head layer) and prints microseconds per token for each T. NO_FTZ=1 in
// the environment leaves denormals unflushed, to show what the engine's
// FTZ/DAZ setting is worth (~30x on the chunked form).
#include <xmmintrin.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/kernels.h"

using namespace lineage;

int main() {
  const int64_t dk = 128, dv = 128, heads = 16;
  const int64_t conv_dim = 3 * heads * dk;  // q | k | v of a 16-head layer
  const int64_t max_t = 1024;
  std::vector<float> rows(static_cast<size_t>(max_t * conv_dim)), g(max_t * heads), beta(max_t * heads);
  std::vector<float> o(static_cast<size_t>(max_t * heads * dv)), S(dk * dv);
  uint32_t x = 1;
  auto rnd = [&] { return (x = x * 1664525u + 1013904223u) / 4294967296.0f - 0.5f; };
  for (float& v : rows) v = rnd() * 0.2f;
  // Log-decays as a random Qwen3.5 layer gives them (-exp(A_log) * softplus),
  // down to ~-4 per token: chunk decays reach the denormal range, which the
  // engine flushes to zero in its threads, as done here.
  for (float& v : g) v = -2.0f + 3.9f * rnd();
  if (!std::getenv("NO_FTZ")) _mm_setcsr(_mm_getcsr() | 0x8040);
  for (float& v : beta) v = 0.5f + 0.5f * rnd();
  std::printf("%6s %14s %14s\n", "T", "recurrent_us/t", "chunked_us/t");
  for (int64_t T : {8, 16, 32, 64, 128, 256, 512, 1024}) {
    double us[2];
    for (int form = 0; form < 2; ++form) {
      double best = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        std::fill(S.begin(), S.end(), 0.0f);
        const auto t0 = std::chrono::steady_clock::now();
        const float *q = rows.data(), *k = q + heads * dk, *v = k + heads * dk;
        if (form == 0) {
          kernels::DeltaRuleRecurrent(q, k, conv_dim, v, conv_dim, g.data(), beta.data(), heads, T, dk, dv, S.data(),
                                      o.data(), heads * dv);
        } else {
          kernels::DeltaRuleChunked(q, k, conv_dim, v, conv_dim, g.data(), beta.data(), heads, T, dk, dv, S.data(),
                                    o.data(), heads * dv);
        }
        best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      us[form] = best / static_cast<double>(T);
    }
    std::printf("%6lld %14.2f %14.2f\n", static_cast<long long>(T), us[0], us[1]);
  }
  return 0;
}
