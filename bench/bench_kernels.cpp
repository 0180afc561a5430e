// bench_kernels: GEMM rates for the Qwen3.5-0.8B weight shapes against the
// machine's copy bandwidth and FMA peak, plus thread-pool dispatch latency.
//
// Usage: bench_kernels [--threads N] [--isa avx2|avx512] [--quick] [--json]
// T = 1 rows rotate through enough copies of the weights to exceed the L3
// cache (decode streams every weight from DRAM each token); GB/s counts
// weight bytes read. T = 512 rows are compute-bound and report GFLOP/s
// (2 flop per multiply-add).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/kernels.h"
#include "core/roofline.h"

namespace {

using namespace lineage;
using Clock = std::chrono::steady_clock;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

struct Shape {
  const char* name;
  int64_t rows, cols;
};

constexpr Shape kShapes[] = {
    {"gdn in_proj_qkvz-ish", 6144, 1024}, {"attn q+gate", 2048, 1024}, {"attn o", 1024, 2048},
    {"gdn qkv", 4096, 1024},              {"ffn gate/up", 3584, 1024}, {"ffn down", 1024, 3584},
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
  } else if (dt == DType::kQ8_0) {
    for (size_t b = 0; b < w.size(); b += 34) w[b] = 0x00, w[b + 1] = 0x20;  // scale 2^-7
  }
  return w;
}

struct Result {
  double seconds, gflops, gbps;
};

Result Run(DType dt, const Shape& s, int64_t T, ThreadPool& pool, bool quick) {
  const int64_t row_bytes = RowBytes(dt, s.cols);
  const int64_t bytes = row_bytes * s.rows;
  // Enough copies that one pass over them exceeds the last-level cache.
  const int64_t copies = T == 1 ? std::max<int64_t>(1, (int64_t{600} << 20) / bytes + 1) : 1;
  std::vector<std::vector<uint8_t>> weights;
  for (int64_t c = 0; c < copies; ++c) weights.push_back(FillWeights(dt, s.rows, s.cols));
  std::vector<float> x(static_cast<size_t>(T * s.cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 113) / 113.0f - 0.5f;
  std::vector<float> y(static_cast<size_t>(T * s.rows));
  const double budget_s = quick ? 0.05 : 0.3;
  double best = 1e30;
  int64_t runs = 0;
  auto start = Clock::now();
  while (runs < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < budget_s && runs < 2000)) {
    const auto& w = weights[runs % copies];
    TensorView view{"bench", dt, {s.rows, s.cols}, w.data(), static_cast<int64_t>(w.size())};
    auto t0 = Clock::now();
    kernels::Gemm(view, x.data(), s.cols, y.data(), s.rows, T, &pool);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    ++runs;
    if (T > 1 && s.rows > 100000) break;  // lm_head prefill: one run is seconds
  }
  return {best, 2.0 * s.rows * s.cols * T / best / 1e9, static_cast<double>(bytes) / best / 1e9};
}

double DispatchLatencyUs(ThreadPool& pool) {
  const int calls = 20000;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) pool.parallel_for(pool.size(), [](int64_t, int64_t, int) {});
    best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  bool quick = false, json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--isa") && i + 1 < argc) {
      std::string isa = argv[++i];
      if (!kernels::ForceIsa(isa == "avx2" ? kernels::Isa::kAvx2 : kernels::Isa::kAvx512)) {
        std::fprintf(stderr, "this CPU lacks %s\n", isa.c_str());
        return 1;
      }
    } else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--isa avx2|avx512] [--quick] [--json]\n", argv[0]);
      return 2;
    }
  }
  ThreadPool pool(threads);
  std::printf("cpu: %s\nisa: %s (detected %s), threads: %d\n", CpuModel().c_str(),
              kernels::IsaName(kernels::ActiveIsa()), kernels::IsaName(kernels::DetectedIsa()), threads);
  const double copy_gbps = MeasureCopyBandwidth(pool) / 1e9;
  const double fma_gflops = MeasureFmaPeakFlops(pool) / 1e9;
  const double dispatch_us = DispatchLatencyUs(pool);
  std::printf("copy bandwidth (read+write): %.1f GB/s\nfp32 FMA peak (%s): %.1f GFLOP/s\n", copy_gbps,
              kernels::IsaName(kernels::ActiveIsa()), fma_gflops);
  std::printf("parallel_for dispatch (empty body): %.2f us\n\n", dispatch_us);
  std::printf("%-8s %-22s %8s %5s %10s %9s %9s %8s\n", "dtype", "shape", "rows", "T", "time_ms",
              "GFLOP/s", "GB/s", "of bound");
  std::string js = "[";
  for (DType dt : {DType::kF32, DType::kBF16, DType::kQ8_0}) {
    for (const Shape& s : kShapes) {
      for (int64_t T : {1, 512}) {
        if (quick && s.rows > 100000 && T > 1) continue;
        Result r = Run(dt, s, T, pool, quick);
        // Decode is bounded by bandwidth, prefill by the FMA peak.
        double frac = T == 1 ? r.gbps / copy_gbps : r.gflops / fma_gflops;
        std::printf("%-8s %-22s %5ldx%-5ld %3ld %10.3f %9.1f %9.1f %7.0f%%\n",
                    std::string(Info(dt).name).c_str(), s.name, static_cast<long>(s.rows),
                    static_cast<long>(s.cols), static_cast<long>(T), r.seconds * 1e3, r.gflops, r.gbps,
                    100 * frac);
        std::fflush(stdout);
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%s{\"dtype\":\"%s\",\"rows\":%ld,\"cols\":%ld,\"T\":%ld,\"ms\":%.4f,\"gflops\":%.2f,\"gbps\":%.2f}",
                      js.size() > 1 ? "," : "", std::string(Info(dt).name).c_str(),
                      static_cast<long>(s.rows), static_cast<long>(s.cols), static_cast<long>(T),
                      r.seconds * 1e3, r.gflops, r.gbps);
        js += buf;
      }
    }
  }
  js += "]";
  if (json)
    std::printf("\n{\"copy_gbps\":%.2f,\"fma_gflops\":%.2f,\"dispatch_us\":%.3f,\"gemm\":%s}\n", copy_gbps,
                fma_gflops, dispatch_us, js.c_str());
  return 0;
}
