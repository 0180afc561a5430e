#include "core/roofline.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

#include "core/isa.h"
#include "core/kernels.h"
#include "core/simd_avx512.h"  // also silences GCC 12 intrinsic-header warnings
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

// Copies with non-temporal stores: the fastest copy here (21 GB/s on one
// core against 8-9 for glibc memcpy and 5-7 with ordinary stores, which pay
// a read for ownership), so the bound it sets is the strictest. dst, src
// 64-byte aligned, bytes a multiple of 64.
void StreamCopy(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  for (int64_t i = 0; i < bytes; i += 64) {
    const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), lo);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), hi);
  }
  _mm_sfence();
}

// Calls piece(q) for every 256-byte piece q of [p, p + bytes) (bytes a
// multiple of 256): `streams` runs of equal length, a piece of each in
// turn, then any remainder after them alone. Always inlined: inside the
// AVX-512 reader the AVX-512 piece then inlines too, where a call from this
// (baseline-ISA) template kept it a call per piece.
template <class Piece>
[[gnu::always_inline]] inline void ForEachPieceInStreams(const uint8_t* p, int64_t bytes, int streams, Piece&& piece) {
  const int64_t run = bytes / 256 / streams * 256;
  for (int64_t i = 0; i < run; i += 256)
    for (int s = 0; s < streams; ++s) piece(p + s * run + i);
  for (int64_t i = streams * run; i < bytes; i += 256) piece(p + i);
}

// Folds every 64-byte line of [p, p + bytes) into a checksum (so the loads
// cannot be dropped), prefetching `ahead` bytes on when ahead > 0, read as
// `streams` streams (ForEachPieceInStreams). Four accumulators keep the
// loads independent. p 64-byte aligned, bytes a multiple of 256.
LINEAGE_AVX512 uint64_t StreamReadAvx512(const uint8_t* p, int64_t bytes, int64_t ahead, int streams) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  const auto piece = [&](const uint8_t* q) LINEAGE_AVX512 {
    if (ahead > 0)
      for (int k = 0; k < 4; ++k) _mm_prefetch(reinterpret_cast<const char*>(q + ahead + 64 * k), _MM_HINT_T1);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) acc[k] = _mm512_add_epi64(acc[k], _mm512_load_si512(q + 64 * k));
  };
  ForEachPieceInStreams(p, bytes, streams, piece);
  return static_cast<uint64_t>(_mm512_reduce_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(acc[0], acc[1]), _mm512_add_epi64(acc[2], acc[3]))));
}

uint64_t StreamReadAvx2(const uint8_t* p, int64_t bytes, int64_t ahead, int streams) {
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
  const auto piece = [&](const uint8_t* q) {
    if (ahead > 0)
      for (int k = 0; k < 4; ++k) _mm_prefetch(reinterpret_cast<const char*>(q + ahead + 64 * k), _MM_HINT_T1);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i* v = reinterpret_cast<const __m256i*>(q + 64 * k);
      acc[k] = _mm256_add_epi64(acc[k], _mm256_add_epi64(_mm256_load_si256(v), _mm256_load_si256(v + 1)));
    }
  };
  ForEachPieceInStreams(p, bytes, streams, piece);
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3])));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

constexpr int kFmaChains = 12;  // > FMA latency x ports, so the loop is throughput-bound
// Short bursts, best of many: on a shared machine a long loop measures the
// scheduler's share, a short one can land in an undisturbed time slice.
constexpr int64_t kFmaIterations = 100'000;  // ~0.2 ms
constexpr int kFmaBursts = 500;
constexpr int kCopyBursts = 200;

float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16  // keeps acc[] in registers
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm256_add_ps(s, acc[c]);
  return _mm256_cvtss_f32(s);
}

LINEAGE_AVX512 float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16  // keeps acc[] in registers
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm512_add_ps(s, acc[c]);
  return _mm_cvtss_f32(_mm512_castps512_ps128(s));
}

// The probes' buffers: kProbeBufferBytes walked in bursts of kBurstBytes,
// each burst evicted from the caches before its turn comes again.
constexpr size_t kProbeBufferBytes = size_t{512} << 20, kBurstBytes = size_t{16} << 20;

// kProbeBufferBytes, first touched by the threads that will read it, with
// room past the end for the prefetches of the last lines (`prefetch_bytes`).
AlignedBuffer ReadProbeBuffer(ThreadPool& pool, int64_t prefetch_bytes) {
  AlignedBuffer a = AllocAligned(kProbeBufferBytes + static_cast<size_t>(std::max<int64_t>(prefetch_bytes, 0)) + 256);
  uint8_t* src = a.get();
  pool.parallel_for(static_cast<int64_t>(kProbeBufferBytes), [&](int64_t lo, int64_t hi, int) {
    std::memset(src + lo, 1, static_cast<size_t>(hi - lo));
  });
  return a;
}

}  // namespace

double MeasureCopyBandwidth(ThreadPool& pool) {
  // Bursts of kBurstBytes copied from successive pieces of two kProbeBufferBytes
  // buffers: each piece is evicted from the caches before its turn comes
  // again, and each burst (~1 ms) is short enough to run undisturbed.
  AlignedBuffer a = AllocAligned(kProbeBufferBytes), b = AllocAligned(kProbeBufferBytes);
  uint8_t* src = a.get();
  uint8_t* dst = b.get();
  // First touch from the threads that will copy, so pages are resident.
  pool.parallel_for(static_cast<int64_t>(kProbeBufferBytes), [&](int64_t lo, int64_t hi, int) {
    std::memset(src + lo, 1, static_cast<size_t>(hi - lo));
    std::memset(dst + lo, 0, static_cast<size_t>(hi - lo));
  });
  const size_t pieces = kProbeBufferBytes / kBurstBytes;
  double best = 0;
  for (int rep = 0; rep < kCopyBursts; ++rep) {
    const size_t offset = (static_cast<size_t>(rep) % pieces) * kBurstBytes;
    auto t0 = Clock::now();
    pool.parallel_for(static_cast<int64_t>(kBurstBytes / 64), [&](int64_t lo, int64_t hi, int) {
      StreamCopy(dst + offset + lo * 64, src + offset + lo * 64, (hi - lo) * 64);
    });
    best = std::max(best, 2.0 * static_cast<double>(kBurstBytes) / SecondsSince(t0));
  }
  return best;
}

double MeasureReadBandwidth(ThreadPool& pool, ReadPattern pattern) {
  AlignedBuffer a = ReadProbeBuffer(pool, pattern.prefetch_bytes);
  const uint8_t* src = a.get();
  const size_t pieces = kProbeBufferBytes / kBurstBytes;
  double best = 0;
  for (int rep = 0; rep < kCopyBursts; ++rep) {
    const size_t offset = (static_cast<size_t>(rep) % pieces) * kBurstBytes;
    const std::span<const uint8_t> burst[] = {{src + offset, kBurstBytes}};
    best = std::max(best, static_cast<double>(kBurstBytes) / SecondsToRead(pool, burst, pattern));
  }
  return best;
}

double MeasureBestReadBandwidth(ThreadPool& pool) {
  double best = 0;
  for (const ReadPattern pattern : kReadPatterns) best = std::max(best, MeasureReadBandwidth(pool, pattern));
  return best;
}

ReadPattern FastestReadPattern(ThreadPool& pool) {
  constexpr int kPatterns = std::size(kReadPatterns), kRounds = 31;
  int64_t max_prefetch = 0;
  for (const ReadPattern pattern : kReadPatterns) max_prefetch = std::max(max_prefetch, pattern.prefetch_bytes);
  AlignedBuffer a = ReadProbeBuffer(pool, max_prefetch);
  const uint8_t* src = a.get();
  const size_t pieces = kProbeBufferBytes / kBurstBytes;
  std::vector<double> seconds[kPatterns];
  size_t burst = 0;
  for (int round = 0; round < kRounds; ++round)
    for (int p = 0; p < kPatterns; ++p) {
      const std::span<const uint8_t> range[] = {{src + (burst++ % pieces) * kBurstBytes, kBurstBytes}};
      seconds[p].push_back(SecondsToRead(pool, range, kReadPatterns[p]));
    }
  int best = 0;
  for (int p = 0; p < kPatterns; ++p) {
    std::nth_element(seconds[p].begin(), seconds[p].begin() + kRounds / 2, seconds[p].end());
    if (seconds[p][kRounds / 2] < seconds[best][kRounds / 2]) best = p;
  }
  return kReadPatterns[best];
}

std::string ReadPatternName(ReadPattern pattern) {
  std::string name = pattern.streams > 1 ? std::to_string(pattern.streams) + " streams" : "one stream";
  if (pattern.prefetch_bytes > 0) name += ", prefetch " + std::to_string(pattern.prefetch_bytes) + " bytes ahead";
  return name;
}

double SecondsToRead(ThreadPool& pool, std::span<const std::span<const uint8_t>> ranges, ReadPattern pattern) {
  const bool wide = kernels::ActiveIsa() == kernels::Isa::kAvx512;
  const int streams = std::max(1, pattern.streams);
  std::vector<uint64_t> sink(static_cast<size_t>(pool.size()));
  const auto t0 = Clock::now();
  for (const std::span<const uint8_t> r : ranges) {
    pool.parallel_for(static_cast<int64_t>(r.size() / 256), [&](int64_t lo, int64_t hi, int part) {
      const uint8_t* p = r.data() + lo * 256;
      sink[part] += wide ? StreamReadAvx512(p, (hi - lo) * 256, pattern.prefetch_bytes, streams)
                         : StreamReadAvx2(p, (hi - lo) * 256, pattern.prefetch_bytes, streams);
    });
  }
  const double seconds = SecondsSince(t0);
  if (sink[0] == 1) std::fputs("", stderr);  // keeps the sums live
  return seconds;
}

double MeasurePeakGemmFlops(ThreadPool& pool, DType dtype) {
  const int64_t rows = 512, cols = 1024, tokens = 512;
  std::vector<uint8_t> weights(static_cast<size_t>(RowBytes(dtype, cols) * rows));
  // Ordinary values (subnormals would measure microcode assists, not the kernel).
  uint8_t* p = weights.data();
  for (int64_t i = 0; i < rows * cols / Info(dtype).block_elements; ++i) {
    if (dtype == DType::kF32) {
      const float f = 0.01f;
      std::memcpy(p + 4 * i, &f, 4);
    } else if (dtype == DType::kF16 || dtype == DType::kBF16) {
      const uint16_t h = dtype == DType::kF16 ? FloatToHalf(0.01f) : FloatToBf16(0.01f);
      std::memcpy(p + 2 * i, &h, 2);
    } else if (dtype == DType::kQ8_0) {
      const uint16_t d = FloatToHalf(0.01f);
      std::memcpy(p + 34 * i, &d, 2);
      std::memset(p + 34 * i + 2, 3, 32);
    }
  }
  TensorView w{"peak", dtype, {rows, cols}, weights.data(), static_cast<int64_t>(weights.size())};
  std::vector<float> x(static_cast<size_t>(tokens * cols), 0.5f), y(static_cast<size_t>(tokens * rows));
  double best = 0;
  for (int rep = 0; rep < 20; ++rep) {
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
  for (int rep = 0; rep < kFmaBursts; ++rep) {
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
