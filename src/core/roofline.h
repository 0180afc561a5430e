// Roofline probes: the two machine limits the forward pass is measured against.
//
// MeasureCopyBandwidth: a STREAM-style copy (b[i] = a[i], non-temporal
// stores) split over
// all pool threads, counting bytes read + bytes written: the best of 200
// bursts of 16 MiB taken in turn from two 512 MiB buffers (so each burst
// misses the caches). Short bursts, best of many, because on a shared
// machine a long run measures the scheduler's share; Gemm's figures are
// best-of too, so the two compare. Decode at T = 1 streams every weight once
// per token, so weight bytes per token divided by this bounds the decode rate.
//
// MeasurePeakGemmFlops: the best rate our own kernels::Gemm reaches on a
// compute-bound problem (T = 512 tokens, 512 x 1024 weights of `dtype`, all
// pool threads, best of 20), in flop/s counting 2 per multiply-add. It is
// the achievable peak of this code, not the hardware's nominal FMA peak; use
// MeasureFmaPeakFlops for the latter (best of 500 bursts of ~0.2 ms).
//
// All functions take seconds; none is meant for the request path.
// Thread-safety: they use `pool` exclusively while they run.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace lineage {

double MeasureCopyBandwidth(ThreadPool& pool);               // bytes / s
// How the read probe walks memory: `prefetch_bytes` > 0 adds a software
// prefetch (to L2) that far ahead of each load, as the row kernels do;
// `streams` > 1 cuts each thread's share into that many runs read 256
// bytes of each in turn: some cores keep more reads in flight on several
// streams than on one (ForEachInterleavedGroup in gemm_internal.h;
// docs/engine.md, "Several streams per core").
struct ReadPattern {
  int64_t prefetch_bytes = 0;
  int streams = 1;
};
inline constexpr int kReadStreams = 4;  // the several-stream pattern the probes try
// The patterns the probes try: one stream; one with a prefetch 4 KiB
// ahead, and 8 KiB (as the AVX-512 super-block kernels, LinePrefetchBytes);
// kReadStreams streams.
inline constexpr ReadPattern kReadPatterns[] = {{0, 1}, {4096, 1}, {8192, 1}, {0, kReadStreams}};
// MeasureReadBandwidth: the read-only stream that decode actually is (it
// writes next to nothing): every byte of the same bursts loaded with 512-bit
// (AVX-512) or 256-bit loads and folded into a checksum, split over all
// pool threads, counting bytes read only. Best of 200 bursts of 16 MiB, as
// the copy probe. MeasureBestReadBandwidth is the best of kReadPatterns:
// a decode step can at best read its weights at that rate, so weight bytes
// per token divided by it is the decode bound that does not charge the
// copy's writes.
double MeasureReadBandwidth(ThreadPool& pool, ReadPattern pattern = {});  // bytes / s
double MeasureBestReadBandwidth(ThreadPool& pool);                         // bytes / s
// Which of the probe's patterns reads fastest on this machine: bursts of
// each in turn, so that all of them see the same moments of a shared
// machine, compared by their medians. Which one wins depends on the core:
// four streams on the Zen 3 VM, one on the Zen 5 VM (docs/engine.md).
ReadPattern FastestReadPattern(ThreadPool& pool);
// "one stream", "one stream, prefetch 4096 bytes ahead", "4 streams", ...
std::string ReadPatternName(ReadPattern pattern);
// The seconds the read probe's loop takes over every byte of `ranges` once
// (whole 256-byte pieces; the last < 256 bytes of a range are skipped),
// split over all pool threads, walked as `pattern`: a plain read of given
// memory, such as a mapped model's weights right after a decode step.
double SecondsToRead(ThreadPool& pool, std::span<const std::span<const uint8_t>> ranges, ReadPattern pattern);
double MeasurePeakGemmFlops(ThreadPool& pool, DType dtype);  // flop / s
// A register-only loop of independent FMAs on every pool thread, in the
// active ISA's widest vectors: the nominal fp32 peak of the cores.
double MeasureFmaPeakFlops(ThreadPool& pool);                // flop / s

}  // namespace lineage
