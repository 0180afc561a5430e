// The cost model of latent attention's paths (latent_paths.h). Each path's
// work is counted (multiply-adds of the attention tile, of Gemms, bytes
// gathered) and priced at rates measured once per process on this CPU, on
// one thread, at shapes like the real ones: so the choice follows where
// this machine's kernels stand relative to each other, not fixed numbers.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"
#include "engine/latent_paths.h"

namespace lineage::engine {
namespace {

// Seconds per unit of work on one thread.
struct Rates {
  double tile_mac = 0;   // AttentionTile, 64 queries of 576 over f32 keys
  double gemm_mac = 0;   // f32 Gemm, 256 tokens through a [192, 512] weight
  double copy_byte = 0;  // memcpy of 2 KiB rows, the gather's unit
};

template <typename F>
double BestSeconds(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

Rates Measure() {
  Rates r;
  uint32_t x = 12345;
  auto rnd = [&] { return static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f; };
  {
    constexpr int64_t kQueries = 64, kDim = 576, kKeys = 512;
    std::vector<float> q(kQueries * kDim), k(kKeys * kDim), out(kQueries * kDim);
    for (float& v : q) v = rnd();
    for (float& v : k) v = rnd();
    kernels::AttentionTile tile;
    kernels::AttentionQueries a;
    a.q = q.data();
    a.ldq = kDim;
    a.out = out.data();
    a.ldo = kDim;
    a.num_rows = 1;
    a.group = kQueries;
    a.head_dim = kDim;
    a.first_pos = kKeys;
    a.scale = 0.04f;
    const double s = BestSeconds(3, [&] {
      tile.Begin(a);
      tile.AddKeys(0, kKeys, k.data(), k.data(), DType::kF32);
      tile.Finish();
    });
    r.tile_mac = s / static_cast<double>(kQueries * kKeys * 2 * kDim);
  }
  {
    constexpr int64_t kOut = 192, kIn = 512, kTokens = 256;
    std::vector<float> w(kOut * kIn), xs(kTokens * kIn), y(kTokens * kOut);
    for (float& v : w) v = rnd();
    for (float& v : xs) v = rnd();
    TensorView view;
    view.dtype = DType::kF32;
    view.shape = {kOut, kIn};
    view.data = w.data();
    view.nbytes = kOut * kIn * 4;
    const double s = BestSeconds(3, [&] { kernels::Gemm(view, xs.data(), kIn, y.data(), kOut, kTokens, nullptr); });
    r.gemm_mac = s / static_cast<double>(kOut * kIn * kTokens);
  }
  {
    constexpr int64_t kRows = 2048, kRowBytes = 2304;
    std::vector<char> src(kRows * kRowBytes * 4, 1), dst(kRows * kRowBytes);
    const double s = BestSeconds(3, [&] {
      for (int64_t i = 0; i < kRows; ++i)  // rows from all over a larger buffer, as pages are
        std::memcpy(&dst[i * kRowBytes], &src[((i * 7919) % (kRows * 4)) * kRowBytes / 4 / 64 * 64], kRowBytes);
    });
    r.copy_byte = s / static_cast<double>(kRows * kRowBytes);
  }
  return r;
}

const Rates& MeasuredRates() {
  static const Rates rates = Measure();
  return rates;
}

}  // namespace

const char* LatentPathName(LatentPath p) {
  switch (p) {
    case LatentPath::kAuto: return "auto";
    case LatentPath::kAbsorbed: return "absorbed";
    case LatentPath::kBlockGather: return "block-gather";
    case LatentPath::kExpanded: return "expanded";
  }
  return "?";
}

LatentCosts EstimateLatentCosts(const LatentShape& shape, int64_t start_pos, int64_t num_rows,
                                const KeySelection* sel, int64_t sel_row0) {
  const Rates& r = MeasuredRates();
  const double nh = static_cast<double>(shape.heads), W = static_cast<double>(shape.latent);
  const double L = static_cast<double>(shape.rank);
  const double hd = static_cast<double>((std::max(shape.dn + shape.dr, shape.dv) + 15) / 16 * 16);
  const double row_bytes = W * 4;
  LatentCosts c;
  // Keys each row attends, and the keys the whole run touches.
  double attended = 0, touched = 0;
  if (sel == nullptr) {
    for (int64_t t = 0; t < num_rows; ++t) attended += static_cast<double>(start_pos + t + 1);
    touched = static_cast<double>(start_pos + num_rows);
  } else {
    std::vector<char> seen(static_cast<size_t>(start_pos + num_rows), 0);
    double block_union = 0, block = 0;
    std::vector<char> block_seen(seen.size(), 0);
    for (int64_t t = 0; t < num_rows; ++t) {
      const int32_t* k = sel->keys.data() + (sel_row0 + t) * sel->top_k;
      const int64_t n = sel->count[sel_row0 + t];
      attended += static_cast<double>(n);
      if (t % kBlockGatherRows == 0) std::fill(block_seen.begin(), block_seen.end(), 0);
      for (int64_t i = 0; i < n; ++i) {
        touched += !seen[k[i]];
        seen[k[i]] = 1;
        const bool fresh = !block_seen[k[i]];
        block_seen[k[i]] = 1;
        if (fresh) {  // a key new to this block: gathered once, attended by every row of the block
          const int64_t rows_in_block = std::min(kBlockGatherRows, num_rows - t / kBlockGatherRows * kBlockGatherRows);
          block_union += 1;
          block += static_cast<double>(rows_in_block);
        }
      }
    }
    if (shape.latent % 16 == 0 && num_rows > 1)
      c.block_gather = block * nh * 2 * W * r.tile_mac + block_union * row_bytes * r.copy_byte;
  }
  // Absorbed: 2 W per (row, key, head); sparse rows gather their keys.
  c.absorbed = attended * nh * 2 * W * r.tile_mac + (sel ? attended * row_bytes * r.copy_byte : 0);
  // Expanded: every touched key expanded per head, then attended per head
  // (masked: every row against every touched key).
  const double pairs = sel ? static_cast<double>(num_rows) * touched : attended;
  if (num_rows > 1)
    c.expanded = touched * row_bytes * r.copy_byte + touched * nh * static_cast<double>(shape.dn + shape.dv) * L * r.gemm_mac +
                 pairs * nh * 2 * hd * r.tile_mac;
  return c;
}

LatentPath ChooseLatentPath(const LatentCosts& c) {
  LatentPath best = LatentPath::kAbsorbed;
  double cost = c.absorbed;
  if (c.block_gather >= 0 && c.block_gather < cost) best = LatentPath::kBlockGather, cost = c.block_gather;
  if (c.expanded >= 0 && c.expanded < cost) best = LatentPath::kExpanded, cost = c.expanded;
  return best;
}

}  // namespace lineage::engine
