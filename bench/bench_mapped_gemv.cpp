// bench_mapped_gemv: the decode GEMV (bf16 weights, one token) over weights
// in a memory-mapped file against the same bytes on the heap, and how the
// pages backing them change its rate.
//
// Usage: bench_mapped_gemv [--file PATH] [--mib N] [--threads N] [--reps N]
//                          [--only NAME,...]
//
// Regions of N MiB (default 512: past the L3 cache's share, so every pass
// streams from DRAM) hold the same bf16 weights of 1024 columns, placed:
//   heap        std::vector (4 KiB pages: THP is "madvise" here)
//   heap-thp    anonymous memory with MADV_HUGEPAGE before it is touched
//   file-4k     a file written with 4 KiB write() calls (as stdio's default
//               buffer does), then mapped (MappedFile): its page cache stays
//               in 4 KiB folios
//   file-8m     the same written with 8 MiB write() calls: the file system
//               builds 2 MiB folios, each mapped with one PMD
//   reread      file-4k with its page cache dropped first, so the mapping's
//               faults read it back (MappedFile advises MADV_HUGEPAGE)
// The variants are measured in turn, pass after pass (a shared machine
// disturbs them alike). Printed per region: how the mapping is backed
// (/proc/self/smaps), and the best and median rate of bursts of 4-12 MiB: a
// plain read of every byte and the decode GEMVs of the 0.8B layer shapes (one
// Gemm each); and of whole lm_head GEMVs (248320 x 1024, 485 MiB).
#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_machine.h"
#include "mapping_backing.h"
#include "core/kernels.h"
#include "core/mapped_file.h"
#include "core/roofline.h"

namespace {

using namespace lineage;
using Clock = std::chrono::steady_clock;

constexpr int64_t kCols = 1024;
constexpr int64_t kRowBytes = kCols * 2;
constexpr int64_t kLmHeadRows = 248320;
// Rows of the decode GEMVs of one Qwen3.5-0.8B GDN layer + FFN, in order.
// Rows of the larger decode GEMVs of a Qwen3.5-0.8B layer (in_proj_qkv, in_proj_z,
// gate, up), all taken with 1024 columns: the bytes streamed per call are what matter.
constexpr int64_t kLayerRows[] = {6144, 2048, 3584, 3584};

void FillBf16(uint8_t* p, int64_t bytes) {
  uint32_t s = 12345;
  for (int64_t i = 0; i + 1 < bytes; i += 2) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<uint8_t>(s >> 24);
    p[i + 1] = static_cast<uint8_t>((s >> 16 & 0x80) | 0x3c);  // |w| in [2^-7, 2^-6): finite, small
  }
}

__attribute__((target("avx512f"))) uint64_t ReadRange(const uint8_t* p, int64_t bytes) {
  __m512i acc = _mm512_setzero_si512();
  for (int64_t i = 0; i < bytes; i += 64) acc = _mm512_xor_si512(acc, _mm512_loadu_si512(p + i));
  return static_cast<uint64_t>(_mm512_reduce_add_epi64(acc));
}

// Samples of GB/s; the machine may be shared, so the variants are measured
// in turn, pass after pass, and compared by their best and median samples.
struct Samples {
  std::vector<double> gbps;
  void Add(int64_t bytes, Clock::time_point t0) {
    gbps.push_back(bytes / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
  }
  double Best() const { return *std::max_element(gbps.begin(), gbps.end()); }
  double Median() const {
    std::vector<double> v = gbps;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
};

constexpr int64_t kReadBurstBytes = 4 << 20;

struct Region {
  std::string name;
  const uint8_t* base = nullptr;
  int64_t bytes = 0;
  Samples read, layers, lm_head;
};

// One pass of each workload over `r`: reads in bursts of 4 MiB split over
// the pool, the layer GEMVs one call (one barrier) each, one lm_head GEMV.
void Pass(Region& r, ThreadPool& pool, const float* x, float* y) {
  static volatile uint64_t sink = 0;
  for (int64_t off = 0; off + kReadBurstBytes <= r.bytes; off += kReadBurstBytes) {
    const auto t0 = Clock::now();
    pool.parallel_for(pool.size(), [&](int64_t c0, int64_t c1, int) {
      const int64_t b0 = kReadBurstBytes * c0 / pool.size(), b1 = kReadBurstBytes * c1 / pool.size();
      sink = sink + ReadRange(r.base + off + b0, b1 - b0);
    });
    r.read.Add(kReadBurstBytes, t0);
  }
  int64_t off = 0;
  for (size_t k = 0;; ++k) {
    const int64_t n = kLayerRows[k % std::size(kLayerRows)];
    if (off + n * kRowBytes > r.bytes) break;
    TensorView w{"layer", DType::kBF16, {n, kCols}, r.base + off, n * kRowBytes};
    const auto t0 = Clock::now();
    kernels::Gemm(w, x, kCols, y, n, 1, &pool);
    r.layers.Add(n * kRowBytes, t0);
    off += n * kRowBytes;
  }
  const int64_t lm_rows = std::min(kLmHeadRows, r.bytes / kRowBytes);
  TensorView lm{"lm_head", DType::kBF16, {lm_rows, kCols}, r.base, lm_rows * kRowBytes};
  const auto t0 = Clock::now();
  kernels::Gemm(lm, x, kCols, y, lm_rows, 1, &pool);
  r.lm_head.Add(lm_rows * kRowBytes, t0);
}

// write() calls of `chunk` bytes: the size decides the page-cache folios
// (small writes leave 4 KiB pages, large ones may build 2 MiB folios).
bool WriteFile(const std::string& path, const uint8_t* p, int64_t bytes, int64_t chunk) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  for (int64_t off = 0; off < bytes;) {
    const ssize_t n = ::write(fd, p + off, static_cast<size_t>(std::min<int64_t>(bytes - off, chunk)));
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    off += n;
  }
  ::fsync(fd);
  ::close(fd);
  return true;
}

bool DropPageCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/lineage_bench_mapped_gemv";
  int64_t mib = 512;
  int threads = 2, reps = 10;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const bool v = i + 1 < argc;
    if (!std::strcmp(argv[i], "--file") && v) {
      path = argv[++i];
    } else if (!std::strcmp(argv[i], "--mib") && v) {
      mib = std::max<int64_t>(64, std::atoll(argv[++i]));
    } else if (!std::strcmp(argv[i], "--threads") && v) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--reps") && v) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--only") && v) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--file PATH] [--mib N] [--threads N] [--reps N] [--only NAME,...]\n", argv[0]);
      return 2;
    }
  }
  const int64_t bytes = mib << 20;
  const auto wanted = [&](const char* name) { return only.empty() || ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos; };
  ThreadPool pool(threads);
  std::printf("cpu: %s, threads %d, regions of %ld MiB, %d passes; load: %s\n", bench::CpuModel().c_str(), threads,
              static_cast<long>(mib), reps, bench::Shell("cut -d' ' -f1-3 /proc/loadavg").c_str());
  std::printf("copy bandwidth probe: %.1f GB/s\n", MeasureCopyBandwidth(pool) / 1e9);

  std::vector<Region> regions;
  std::vector<uint8_t> heap(static_cast<size_t>(bytes));
  FillBf16(heap.data(), bytes);
  if (wanted("heap")) regions.push_back({"heap", heap.data(), bytes});

  void* anon = MAP_FAILED;
  if (wanted("heap-thp")) {
    anon = mmap(nullptr, static_cast<size_t>(bytes) + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (anon != MAP_FAILED) {
      auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(anon) + (2 << 20) - 1) & ~uintptr_t{(2 << 20) - 1});
      madvise(aligned, static_cast<size_t>(bytes), MADV_HUGEPAGE);
      std::memcpy(aligned, heap.data(), static_cast<size_t>(bytes));
      regions.push_back({"heap-thp", aligned, bytes});
    }
  }

  // The file as a writer with small writes leaves it, as one with 8 MiB
  // writes leaves it, and read back from disk after dropping its page cache.
  struct Variant {
    const char* name;
    int64_t write_chunk;
    bool reread;
  };
  std::vector<MappedFile> files;
  std::vector<std::string> paths;
  for (const Variant& v : {Variant{"file-4k", 4096, false}, Variant{"file-8m", 8 << 20, false},
                           Variant{"reread", 4096, true}}) {
    if (!wanted(v.name)) continue;
    const std::string p = path + "." + v.name;
    if (!WriteFile(p, heap.data(), bytes, v.write_chunk)) {
      std::fprintf(stderr, "cannot write %s\n", p.c_str());
      return 1;
    }
    paths.push_back(p);
    if (v.reread && !DropPageCache(p)) std::fprintf(stderr, "cannot drop the page cache of %s\n", p.c_str());
    Result<MappedFile> f = MappedFile::Open(p);
    if (!f.ok()) {
      std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
      return 1;
    }
    files.push_back(std::move(*f));
    regions.push_back({v.name, files.back().data(), bytes});
  }
  if (!wanted("heap")) std::vector<uint8_t>().swap(heap);

  std::vector<float> x(kCols), y(static_cast<size_t>(bytes / kRowBytes));
  for (int64_t i = 0; i < kCols; ++i) x[i] = static_cast<float>((i * 7919) % 113) / 113.0f - 0.5f;
  for (Region& r : regions) Pass(r, pool, x.data(), y.data());  // first touch: page faults, read-ahead
  for (Region& r : regions) r.read = r.layers = r.lm_head = Samples{};
  for (int rep = 0; rep < reps; ++rep)
    for (Region& r : regions) Pass(r, pool, x.data(), y.data());

  std::printf("GB/s of weights read: best and median sample; read and layers: bursts of 4-12 MiB, lm_head: whole calls\n");
  std::printf("%-10s %13s   %13s   %13s   %s\n", "memory", "read", "gemv layers", "gemv lm_head", "backing");
  for (const Region& r : regions) {
    std::printf("%-10s %6.1f %6.1f   %6.1f %6.1f   %6.1f %6.1f   %s\n", r.name.c_str(), r.read.Best(),
                r.read.Median(), r.layers.Best(), r.layers.Median(), r.lm_head.Best(), r.lm_head.Median(),
                bench::MappingBacking(r.base).c_str());
  }
  files.clear();
  for (const std::string& p : paths) ::unlink(p.c_str());
  if (anon != MAP_FAILED) munmap(anon, static_cast<size_t>(bytes) + (2 << 20));
  return 0;
}
