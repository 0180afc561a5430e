// Roofline probes: the two machine limits the forward pass is measured against.
//
// MeasureCopyBandwidth: a STREAM-style copy (b[i] = a[i]) over two buffers of
// 256 MiB each (far beyond any cache here), split over all pool threads,
// counting bytes read + bytes written, best of a few repetitions. Decode at
// T = 1 streams every weight once per token, so weight bytes per token divided
// by this figure bounds the decode rate.
//
// MeasurePeakGemmFlops: the best rate our own kernels::Gemm reaches on a
// compute-bound problem (T = 512 tokens, 2048 x 1024 weights of `dtype`, all
// pool threads), in flop/s counting 2 per multiply-add. It is the
// achievable peak of this code, not the hardware's nominal FMA peak; use
// MeasureFmaPeakFlops for the latter.
//
// All functions take seconds; none is meant for the request path.
// Thread-safety: they use `pool` exclusively while they run.
#pragma once

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace lineage {

double MeasureCopyBandwidth(ThreadPool& pool);               // bytes / s
double MeasurePeakGemmFlops(ThreadPool& pool, DType dtype);  // flop / s
// A register-only loop of independent FMAs on every pool thread, in the
// active ISA's widest vectors: the nominal fp32 peak of the cores.
double MeasureFmaPeakFlops(ThreadPool& pool);                // flop / s

}  // namespace lineage
