// bench_kernels: GEMM rates for the Qwen3.5-0.8B weight shapes against the
// machine's copy bandwidth and FMA peak, plus thread-pool dispatch latency.
//
// Usage: bench_kernels [--threads N] [--isa avx512|avx2|avx2-novnni] [--sweeps N] [--quick] [--decode] [--l2] [--json] [--exact]
//                      [--dtypes f32,bf16,q8_0,q4_k,...] (default f32,bf16,q8_0)
// --exact: kernels::SetExactQ8(true), every block type on fp32 activations.
// --decode: only T = 1 on the mlp gate / up and lm_head shapes, weights
// streamed from DRAM, with the read probe measured after each sweep: the
// per-family table of decode rate against the read rate of the same run;
// with --l2 also mlp down (3584 columns: a row of many blocks).
// --l2: only T = 1, on ~256 KiB of weights per thread read again and again
// (hot in L2): the kernels' arithmetic rate, the ceiling of their DRAM rate.
// It also prints the read-only stream bandwidth (MeasureReadBandwidth), the
// roofline of decode, beside the copy figure.
// GB/s counts weight bytes read (decode streams every weight from DRAM each
// token); GFLOP/s counts 2 flop per multiply-add. See Run() for how runs are
// kept short. The bounds (copy bandwidth, FMA peak) are the best of four
// measurements spread over the run.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/isa.h"
#include "core/kernels.h"
#include "core/quant_blocks.h"
#include "core/roofline.h"
#include "bench_machine.h"

using lineage::bench::CpuModel;

namespace {

using namespace lineage;
using Clock = std::chrono::steady_clock;

std::string Command(const char* cmd) {
  std::string out;
  if (FILE* f = popen(cmd, "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

struct Shape {
  const char* name;
  int64_t rows, cols;
};

constexpr Shape kShapes[] = {
    {"gdn in_proj_qkv", 6144, 1024}, {"gdn in_proj_z", 2048, 1024},   {"out_proj / o_proj", 1024, 2048},
    {"attn q_proj+gate", 4096, 1024}, {"mlp gate / up", 3584, 1024}, {"mlp down", 1024, 3584},
    {"lm_head", 248320, 1024},
};

std::vector<uint8_t> FillWeights(DType dt, int64_t rows, int64_t cols) {
  std::vector<uint8_t> w(static_cast<size_t>(RowBytes(dt, cols) * rows));
  uint32_t s = 12345;
  for (size_t i = 0; i < w.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    w[i] = static_cast<uint8_t>(s >> 24);
  }
  if (dt == DType::kF32) {  // keep floats finite and small: random mantissa, fixed exponent
    for (size_t i = 0; i + 3 < w.size(); i += 4) w[i + 3] = (w[i + 3] & 0x80) | 0x3c;
  } else if (dt == DType::kBF16) {
    for (size_t i = 0; i + 1 < w.size(); i += 2) w[i + 1] = (w[i + 1] & 0x80) | 0x3c;
  } else if (IsQuantized(dt)) {  // every fp16 scale and min 2^-7
    const int64_t bb = Info(dt).block_bytes;
    for (size_t b = 0; b < w.size(); b += static_cast<size_t>(bb)) {
      for (const quant::HalfField& f : quant::HalfFields(dt)) w[b + f.offset] = 0x00, w[b + f.offset + 1] = 0x20;
      if (const int e = quant::E8M0Field(dt); e >= 0) w[b + e] = 121;  // 2^-7
    }
  }
  return w;
}

struct Result {
  double seconds, gflops, gbps;
};

// Times Gemm on runs short enough (a few ms) that, best of many, some run
// undisturbed on a shared machine:
//  - T = 1: every run takes the next `slice_rows` rows of a set of weights
//    larger than the L3 cache (copies of the matrix, or the matrix itself
//    for lm_head), so each run streams its weights from DRAM;
//  - T = 512: only the first rows, as many as hold kPrefillWeights weights
//    (a multiple of 32); per-row work is the same for every row, so the rate
//    depends on cols and T, not on rows, and every shape's run is as short.
constexpr int64_t kPrefillWeights = 512 * 1024;

// in_l2: T = 1 on one slice of about 256 KiB per thread read again and
// again, so the weights come from L2: the kernel's arithmetic rate, which
// bounds what it can reach on a stream from DRAM.
Result Run(DType dt, const Shape& s, int64_t T, ThreadPool& pool, bool quick, bool in_l2 = false) {
  const int64_t row_bytes = RowBytes(dt, s.cols);
  const int64_t rows = T == 1 ? s.rows : std::min(s.rows, std::max<int64_t>(32, kPrefillWeights / s.cols / 32 * 32));
  const int64_t slice_bytes = in_l2 ? (int64_t{256} << 10) * pool.size() : int64_t{32} << 20;
  const int64_t slice_rows = std::min(rows, std::max<int64_t>(64, slice_bytes / row_bytes));
  const int64_t copies = T == 1 && !in_l2 ? std::max<int64_t>(1, (int64_t{600} << 20) / (row_bytes * rows) + 1) : 1;
  const int64_t slices_per_copy = rows / slice_rows;
  std::vector<std::vector<uint8_t>> weights;
  weights.push_back(FillWeights(dt, rows, s.cols));
  for (int64_t c = 1; c < copies; ++c) weights.push_back(weights.front());
  std::vector<float> x(static_cast<size_t>(T * s.cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 113) / 113.0f - 0.5f;
  std::vector<float> y(static_cast<size_t>(T * slice_rows));
  const double budget_s = quick ? 0.05 : T == 1 ? 0.3 : 1.0;
  double best = 1e30;
  int64_t runs = 0;
  auto start = Clock::now();
  while (runs < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < budget_s && runs < 5000)) {
    const int64_t k = in_l2 ? 0 : runs % (copies * slices_per_copy);
    const uint8_t* base = weights[k / slices_per_copy].data() + (k % slices_per_copy) * slice_rows * row_bytes;
    TensorView view{"bench", dt, {slice_rows, s.cols}, base, slice_rows * row_bytes};
    auto t0 = Clock::now();
    kernels::Gemm(view, x.data(), s.cols, y.data(), slice_rows, T, &pool);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    ++runs;
  }
  return {best, 2.0 * slice_rows * s.cols * T / best / 1e9, static_cast<double>(slice_rows * row_bytes) / best / 1e9};
}

// Microseconds per token for one value head (dk = dv = 128, Qwen3.5) of the
// gated delta rule: the recurrence at T = 1 (decode), the chunked form at T = 512.
std::pair<double, double> DeltaRuleUsPerToken() {
  const int64_t T = 512, dk = 128, dv = 128;
  std::vector<float> q(T * dk, 0.01f), k(T * dk, 0.088f), v(T * dv, 0.5f), g(T, -0.1f), beta(T, 0.5f);
  std::vector<float> S(dk * dv, 0.0f), o(T * dv);
  double best_recurrent = 1e30, best_chunked = 1e30;
  for (int rep = 0; rep < 200; ++rep) {
    auto t0 = Clock::now();
    kernels::DeltaRuleRecurrent(q.data(), k.data(), dk, v.data(), dv, g.data(), beta.data(), 1, 1, dk, dv,
                                S.data(), o.data(), dv);
    best_recurrent = std::min(best_recurrent, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (rep % 10) continue;
    t0 = Clock::now();
    kernels::DeltaRuleChunked(q.data(), k.data(), dk, v.data(), dv, g.data(), beta.data(), 1, T, dk, dv,
                              S.data(), o.data(), dv);
    best_chunked = std::min(best_chunked, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / T);
  }
  return {best_recurrent, best_chunked};
}

// Per parallel_for call, best of 3 x 20000 calls: with an empty body (the
// caller may take every part itself), and with a body that waits until
// every part has started, so each call includes waking all workers.
std::pair<double, double> DispatchLatencyUs(ThreadPool& pool) {
  const int calls = 20000;
  double empty = 1e30, all = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) pool.parallel_for(pool.size(), [](int64_t, int64_t, int) {});
    empty = std::min(empty, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    std::atomic<int> started{0};
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      const int target = (i + 1) * pool.size();
      pool.parallel_for(pool.size(), [&](int64_t, int64_t, int) {
        started++;
        while (started.load() < target) _mm_pause();
      });
    }
    all = std::min(all, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
  }
  return {empty, all};
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, sweeps = 3;
  bool quick = false, json = false, in_l2 = false, decode = false;
  std::vector<DType> dtypes = {DType::kF32, DType::kBF16, DType::kQ8_0};
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--threads") && has_value) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--isa") && has_value) {
      const std::string isa = argv[++i];
      if (!kernels::ForceIsaByName(isa)) {
        std::fprintf(stderr, "--isa %s: unknown or not on this CPU (%s)\n", isa.c_str(), kernels::kIsaNames);
        return 1;
      }
    } else if (!std::strcmp(argv[i], "--sweeps") && has_value) {
      sweeps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
      sweeps = 1;
    } else if (!std::strcmp(argv[i], "--dtypes") && has_value) {
      dtypes.clear();
      std::string list = argv[++i];
      for (size_t a = 0; a <= list.size();) {
        const size_t b = std::min(list.find(',', a), list.size());
        const auto dt = ParseDType(list.substr(a, b - a));
        if (!dt) {
          std::fprintf(stderr, "unknown dtype '%s'\n", list.substr(a, b - a).c_str());
          return 2;
        }
        dtypes.push_back(*dt);
        a = b + 1;
      }
    } else if (!std::strcmp(argv[i], "--decode")) {
      decode = true;
    } else if (!std::strcmp(argv[i], "--l2")) {
      in_l2 = true;
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (!std::strcmp(argv[i], "--exact")) {
      kernels::SetExactQ8(true);
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--isa avx512|avx2|avx2-novnni] [--sweeps N] [--quick] [--decode] [--l2] [--json] [--exact] [--dtypes A,B]\n",
                   argv[0]);
      return 2;
    }
  }
  ThreadPool pool(threads);
  std::printf("cpu: %s\nbuild: gcc %s%s, commit %s\n", CpuModel().c_str(), __VERSION__,
#ifdef NDEBUG
              " -DNDEBUG",
#else
              " (assertions on)",
#endif
              Command("git rev-parse --short HEAD 2>/dev/null").c_str());
  std::printf("isa: %s (detected %s), threads: %d\n",
              kernels::IsaName(kernels::ActiveIsa()), kernels::IsaName(kernels::DetectedIsa()), threads);
  double copy_gbps = MeasureCopyBandwidth(pool) / 1e9;
  double fma_gflops = MeasureFmaPeakFlops(pool) / 1e9;
  const auto [dispatch_us, rendezvous_us] = DispatchLatencyUs(pool);
  std::printf("copy bandwidth (read+write): %.1f GB/s\nfp32 FMA peak (%s): %.1f GFLOP/s\n", copy_gbps,
              kernels::IsaName(kernels::ActiveIsa()), fma_gflops);
  {
    ThreadPool one(1);
    const ReadPattern prefetched{4096, 1}, streams{0, kReadStreams};
    std::printf(
        "read bandwidth (read only): %.1f GB/s, %.1f with prefetch 4 KiB ahead, %.1f as %d streams; one thread "
        "%.1f, %.1f, %.1f\n",
        MeasureReadBandwidth(pool) / 1e9, MeasureReadBandwidth(pool, prefetched) / 1e9,
        MeasureReadBandwidth(pool, streams) / 1e9, kReadStreams, MeasureReadBandwidth(one) / 1e9,
        MeasureReadBandwidth(one, prefetched) / 1e9, MeasureReadBandwidth(one, streams) / 1e9);
  }
  std::printf("parallel_for per call: %.2f us (empty body), %.2f us (every thread takes part)\n", dispatch_us,
              rendezvous_us);
  const auto [recurrent_us, chunked_us] = DeltaRuleUsPerToken();
  std::printf("delta rule, one head 128x128, one thread: recurrent %.2f us/token (T = 1), chunked %.2f us/token (T = 512)\n\n",
              recurrent_us, chunked_us);
  struct Row {
    DType dt;
    const Shape* shape;
    int64_t T;
    Result r;
  };
  std::vector<Row> rows;
  double read_gbps = MeasureBestReadBandwidth(pool) / 1e9;
  // The machine may be shared: the whole sweep runs `sweeps` times, each
  // figure is the best over the sweeps, and the bounds are measured again
  // after each sweep (the ratios use the best seen).
  for (DType dt : dtypes)
    for (const Shape& s : kShapes)
      for (int64_t T : {1, 512})
        if ((!in_l2 && !decode) ||
            (T == 1 && (!decode || s.rows == 3584 || s.rows == 248320 || (in_l2 && s.cols == 3584))))
          rows.push_back({dt, &s, T, {1e30, 0, 0}});
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (Row& row : rows) {
      Result r = Run(row.dt, *row.shape, row.T, pool, quick, in_l2);
      if (r.seconds < row.r.seconds) row.r = r;
    }
    const double copy_again = MeasureCopyBandwidth(pool) / 1e9, fma_again = MeasureFmaPeakFlops(pool) / 1e9;
    const double read_again = MeasureBestReadBandwidth(pool) / 1e9;
    read_gbps = std::max(read_gbps, read_again);
    std::printf("after sweep %d: copy %.1f GB/s, read %.1f GB/s, FMA peak %.1f GFLOP/s\n", sweep + 1, copy_again,
                read_again, fma_again);
    std::fflush(stdout);
    copy_gbps = std::max(copy_gbps, copy_again);
    fma_gflops = std::max(fma_gflops, fma_again);
  }
  std::printf("bounds used: copy %.1f GB/s, FMA peak %.1f GFLOP/s\n", copy_gbps, fma_gflops);

  std::printf("\nT = 1: weights streamed from DRAM in slices of <= 32 MiB; T = 512: the first rows holding %ld weights\n",
              static_cast<long>(kPrefillWeights));
  std::printf("%-8s %-22s %11s %5s %10s %9s %9s %8s\n", "dtype", "shape", "rows x cols", "T", "time_ms",
              "GFLOP/s", "GB/s", "of bound");
  if (decode) std::printf("(decode: of bound = of the read-only rate, best %.1f GB/s)\n", read_gbps);
  std::string js = "[";
  for (const Row& row : rows) {
    const Result& r = row.r;
    // Decode is bounded by bandwidth, prefill by the FMA peak.
    const double frac = row.T == 1 ? r.gbps / (decode ? read_gbps : copy_gbps) : r.gflops / fma_gflops;
    const std::string dtype(Info(row.dt).name);
    std::printf("%-8s %-22s %5ldx%-5ld %3ld %10.3f %9.1f %9.1f %7.0f%%\n", dtype.c_str(), row.shape->name,
                static_cast<long>(row.shape->rows), static_cast<long>(row.shape->cols), static_cast<long>(row.T),
                r.seconds * 1e3, r.gflops, r.gbps, 100 * frac);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s{\"dtype\":\"%s\",\"rows\":%ld,\"cols\":%ld,\"T\":%ld,\"ms\":%.4f,\"gflops\":%.2f,\"gbps\":%.2f}",
                  js.size() > 1 ? "," : "", dtype.c_str(), static_cast<long>(row.shape->rows),
                  static_cast<long>(row.shape->cols), static_cast<long>(row.T), r.seconds * 1e3, r.gflops, r.gbps);
    js += buf;
  }
  js += "]";
  if (json)
    std::printf("\n{\"copy_gbps\":%.2f,\"fma_gflops\":%.2f,\"dispatch_us\":%.3f,\"gemm\":%s}\n", copy_gbps,
                fma_gflops, dispatch_us, js.c_str());
  return 0;
}
