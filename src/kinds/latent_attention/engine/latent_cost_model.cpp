// The cost model of latent attention's paths (latent_paths.h). Each path's
// work is counted (multiply-adds of the attention tile, of Gemms, bytes
// gathered) and priced at rates measured on this CPU, on one thread, at the
// layer's own widths and the tile shapes each path runs (once per process
// and shape, a few milliseconds): so the choice follows where this
// machine's kernels stand relative to each other, not fixed numbers.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"
#include "kinds/latent_attention/engine/latent_paths.h"

namespace lineage::engine {
namespace {

// Seconds per unit of work on one thread, measured at one layer shape.
struct Rates {
  double dense_mac = 0;     // absorbed tile: kMaxRowsPerTask rows x heads queries of W
  double sparse_mac = 0;    // absorbed tile: one row's heads of W (a gathered selection)
  double expanded_mac = 0;  // expanded tile: 256 rows of one head, padded width
  double gemm_mac = 0;      // f32 Gemm, 256 latent rows through W_k,h [dn, L]
  double copy_byte = 0;     // memcpy of latent rows from all over a larger buffer (the gather)
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

// Seconds per multiply-add of a tile of `rows` x `group` queries of
// `head_dim` over 512 f32 keys (enough that the queries' setup, as in a real
// run, is a small part), the best of a few after a warm-up.
double TileMac(int64_t rows, int64_t group, int64_t head_dim) {
  constexpr int64_t kKeys = 512;
  uint32_t x = 12345;
  auto rnd = [&] { return static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f; };
  std::vector<float> q(static_cast<size_t>(rows * group * head_dim)), k(static_cast<size_t>(kKeys * head_dim));
  std::vector<float> out(q.size());
  for (float& v : q) v = rnd();
  for (float& v : k) v = rnd();
  kernels::AttentionTile tile;
  kernels::AttentionQueries a;
  a.q = q.data();
  a.ldq = group * head_dim;
  a.out = out.data();
  a.ldo = group * head_dim;
  a.num_rows = rows;
  a.group = group;
  a.head_dim = head_dim;
  a.first_pos = kKeys + rows;  // every key visible
  a.scale = 0.04f;
  const double s = BestSeconds(6, [&] {
    tile.Begin(a);
    tile.AddKeys(0, kKeys, k.data(), k.data(), DType::kF32);
    tile.Finish();
  });
  return s / static_cast<double>(rows * group * kKeys * 2 * head_dim);
}

Rates Measure(const LatentShape& shape) {
  Rates r;
  const int64_t W = shape.latent, hd = (std::max(shape.dn + shape.dr, shape.dv) + 15) / 16 * 16;
  r.dense_mac = TileMac(16, shape.heads, W);
  r.sparse_mac = TileMac(1, shape.heads, W);
  r.expanded_mac = TileMac(256, 1, hd);
  {
    const int64_t out = shape.dn, in = shape.rank, tokens = 256;
    std::vector<float> w(static_cast<size_t>(out * in), 0.01f), xs(static_cast<size_t>(tokens * W), 0.02f);
    std::vector<float> y(static_cast<size_t>(tokens * hd));
    TensorView view;
    view.dtype = DType::kF32;
    view.shape = {out, in};
    view.data = w.data();
    view.nbytes = out * in * 4;
    const double s = BestSeconds(3, [&] { kernels::Gemm(view, xs.data(), W, y.data(), hd, tokens, nullptr); });
    r.gemm_mac = s / static_cast<double>(out * in * tokens);
  }
  {
    constexpr int64_t kRows = 2048;
    const int64_t row_bytes = W * 4;
    std::vector<char> src(static_cast<size_t>(kRows * row_bytes * 4), 1), dst(static_cast<size_t>(kRows * row_bytes));
    const double s = BestSeconds(3, [&] {
      for (int64_t i = 0; i < kRows; ++i)  // rows from all over a larger buffer, as pages are
        std::memcpy(&dst[i * row_bytes], &src[((i * 7919) % (kRows * 4)) * row_bytes], static_cast<size_t>(row_bytes));
    });
    r.copy_byte = s / static_cast<double>(kRows * row_bytes);
  }
  return r;
}

// The rates at `shape`, measured at the first call with it (a few
// milliseconds) and kept for the process.
Rates MeasuredRates(const LatentShape& shape) {
  static std::mutex mu;
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>, Rates> rates;
  const auto key = std::make_tuple(shape.heads, shape.latent, shape.rank, shape.dn, shape.dr, shape.dv);
  std::lock_guard<std::mutex> lock(mu);
  auto it = rates.find(key);
  if (it == rates.end()) it = rates.emplace(key, Measure(shape)).first;
  return it->second;
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
  const Rates r = MeasuredRates(shape);
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
      c.block_gather = block * nh * 2 * W * r.dense_mac + block_union * row_bytes * r.copy_byte;
  }
  // Absorbed: 2 W per (row, key, head); sparse rows gather their keys.
  c.absorbed = sel ? attended * (nh * 2 * W * r.sparse_mac + row_bytes * r.copy_byte)
                  : attended * nh * 2 * W * r.dense_mac;
  // Expanded: every touched key expanded per head, then attended per head
  // (masked: every row against every touched key).
  // (A sparse run that touches every key is masked by position too: its
  // pairs are the causal ones.)
  const bool by_position = touched == static_cast<double>(start_pos + num_rows);
  double pairs = attended;
  if (sel && !by_position) pairs = static_cast<double>(num_rows) * touched;
  if (sel && by_position) {
    pairs = 0;
    for (int64_t t = 0; t < num_rows; ++t) pairs += static_cast<double>(start_pos + t + 1);
  }
  if (num_rows > 1)
    c.expanded = touched * row_bytes * r.copy_byte + touched * nh * static_cast<double>(shape.dn + shape.dv) * L * r.gemm_mac +
                 pairs * nh * 2 * hd * r.expanded_mac;
  return c;
}

LatentPath ChooseLatentPath(const LatentCosts& c) {
  // The model is within about a quarter of the measured times
  // (bench_sparse_latent), so another path must be modelled clearly
  // cheaper (by a tenth) than the absorbed one, whose kernel is the surest.
  constexpr double kMargin = 0.9;
  LatentPath best = LatentPath::kAbsorbed;
  double cost = c.absorbed * kMargin;
  if (c.block_gather >= 0 && c.block_gather < cost) best = LatentPath::kBlockGather, cost = c.block_gather;
  if (c.expanded >= 0 && c.expanded < cost) best = LatentPath::kExpanded, cost = c.expanded;
  return best;
}

}  // namespace lineage::engine
