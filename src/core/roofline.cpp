#include "core/roofline.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/isa.h"
#include "core/kernels.h"
#include "core/tensor_view.h"

namespace lineage {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBuffer AllocAligned(size_t bytes) {
  return AlignedBuffer(static_cast<uint8_t*>(std::aligned_alloc(64, bytes)));
}

constexpr int kFmaChains = 12;  // > FMA latency x ports, so the loop is throughput-bound
constexpr int64_t kFmaIterations = 20'000'000;

float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm256_add_ps(s, acc[c]);
  return _mm256_cvtss_f32(s);
}

LINEAGE_AVX512 float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm512_add_ps(s, acc[c]);
  return _mm_cvtss_f32(_mm512_castps512_ps128(s));
}

}  // namespace

double MeasureCopyBandwidth(ThreadPool& pool) {
  const size_t bytes = size_t{256} << 20;
  AlignedBuffer a = AllocAligned(bytes), b = AllocAligned(bytes);
  uint8_t* src = a.get();
  uint8_t* dst = b.get();
  const int64_t n = static_cast<int64_t>(bytes);
  // First touch from the threads that will copy, so pages are resident.
  pool.parallel_for(n, [&](int64_t lo, int64_t hi, int) {
    std::memset(src + lo, 1, static_cast<size_t>(hi - lo));
    std::memset(dst + lo, 0, static_cast<size_t>(hi - lo));
  });
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    pool.parallel_for(n, [&](int64_t lo, int64_t hi, int) {
      std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
    });
    best = std::max(best, 2.0 * static_cast<double>(bytes) / SecondsSince(t0));
  }
  return best;
}

double MeasurePeakGemmFlops(ThreadPool& pool, DType dtype) {
  const int64_t rows = 2048, cols = 1024, tokens = 512;
  std::vector<uint8_t> weights(static_cast<size_t>(RowBytes(dtype, cols) * rows));
  // Small values that are valid in every dtype (0x01 bytes: tiny fp16/bf16 or int8 1).
  std::memset(weights.data(), 1, weights.size());
  TensorView w{"peak", dtype, {rows, cols}, weights.data(), static_cast<int64_t>(weights.size())};
  std::vector<float> x(static_cast<size_t>(tokens * cols), 0.5f), y(static_cast<size_t>(tokens * rows));
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    kernels::Gemm(w, x.data(), cols, y.data(), rows, tokens, &pool);
    best = std::max(best, 2.0 * rows * cols * tokens / SecondsSince(t0));
  }
  return best;
}

double MeasureFmaPeakFlops(ThreadPool& pool) {
  const bool wide = kernels::ActiveIsa() == kernels::Isa::kAvx512;
  const int lanes = wide ? 16 : 8;
  std::vector<float> sink(static_cast<size_t>(pool.size()));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    pool.parallel_for(pool.size(), [&](int64_t lo, int64_t hi, int) {
      for (int64_t i = lo; i < hi; ++i)
        sink[i] = wide ? FmaLoopAvx512(kFmaIterations) : FmaLoopAvx2(kFmaIterations);
    });
    double flops = 2.0 * lanes * kFmaChains * static_cast<double>(kFmaIterations) * pool.size();
    best = std::max(best, flops / SecondsSince(t0));
  }
  return best;
}

}  // namespace lineage
