// The absorbed and block-gather paths of latent attention (latent_paths.h):
// the attended rows come out W wide per head, c in their first L values.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"
#include "kinds/latent_attention/engine/latent_paths.h"

namespace lineage::engine {
namespace {


// The K and V halves of a page's first n latent rows as f32: the page's
// own rows when it stores f32, else widened into `widened` (2 P half floats).
std::pair<const float*, const float*> PageLatentHalves(const LatentRun& run, const cache::KvPage& page, int64_t n,
                                                       float* widened) {
  const cache::KvLayout& layout = run.kv->layout();
  if (layout.dtype == DType::kF32)
    return {static_cast<const float*>(page.k(run.layer, 0)), static_cast<const float*>(page.v(run.layer, 0))};
  const int64_t half_block = layout.page_tokens * (run.latent / 2);
  page.ReadRows(run.layer, 0, false, n, widened);
  page.ReadRows(run.layer, 0, true, n, widened + half_block);
  return {widened, widened + half_block};
}

// Rows [row0, row1) of heads [h0, h1) (q_lat of head h at q + h W, row
// stride ldq): each page's latent rows are put back together ([K half | V
// half]) in a buffer and fed to a kernels::AttentionTile whose keys and
// values are both the row, every head of the block a query of the one
// latent "kv head". The first L values of each head's output (stride ldo,
// W per head) are the attended c. REQUIRES: W a multiple of 16.
void AttendLatentTiled(const LatentRun& run, int64_t row0, int64_t row1, int64_t h0, int64_t h1, const float* q,
                       int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, W = run.latent, half = W / 2;
  kernels::AttentionQueries queries;
  queries.q = q + row0 * ldq + h0 * W;
  queries.ldq = ldq;
  queries.out = out + row0 * ldo + h0 * W;
  queries.ldo = ldo;
  queries.num_rows = row1 - row0;
  queries.group = h1 - h0;
  queries.head_dim = W;
  queries.first_pos = run.start_pos + row0;
  queries.scale = run.scale;
  thread_local kernels::AttentionTile tile;
  thread_local std::vector<float> rows, widened;
  rows.resize(static_cast<size_t>(P * W));
  widened.resize(static_cast<size_t>(2 * P * half));
  tile.Begin(queries);
  const int64_t num_keys = tile.last_key() + 1;
  for (int64_t p = 0; p * P < num_keys; ++p) {
    const cache::KvPage& page = run.kv->page(p);
    const int64_t n = std::min(P, num_keys - p * P);
    auto [kr, vr] = PageLatentHalves(run, page, n, widened.data());
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(rows.data() + j * W, kr + j * half, static_cast<size_t>(half) * 4);
      std::memcpy(rows.data() + j * W + half, vr + j * half, static_cast<size_t>(half) * 4);
    }
    tile.AddKeys(p * P, n, rows.data(), rows.data(), DType::kF32);
  }
  tile.Finish();
}

// Rows [row0, row1) of one head: q_lat rows at q (stride ldq, W values
// each), the attended latent c (L values) to out (stride ldo). Online
// softmax a page at a time, a dot product per key: the form for latent
// widths the tile does not take (not a multiple of 16).
void AttendLatent(const LatentRun& run, int64_t row0, int64_t row1, const float* q, int64_t ldq, float* out,
                  int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, half = run.latent / 2, L = run.rank, rows = row1 - row0;
  thread_local std::vector<float> acc, mx, sum, scores, widened;
  acc.assign(static_cast<size_t>(rows * L), 0.0f);
  mx.assign(static_cast<size_t>(rows), -INFINITY);
  sum.assign(static_cast<size_t>(rows), 0.0f);
  scores.resize(static_cast<size_t>(P));
  widened.resize(static_cast<size_t>(2 * P * half));
  const int64_t max_keys = run.start_pos + row1;
  for (int64_t p = 0; p * P < max_keys; ++p) {
    const cache::KvPage& page = run.kv->page(p);
    const int64_t n = std::min(P, max_keys - p * P);
    auto [kr, vr] = PageLatentHalves(run, page, n, widened.data());
    for (int64_t t = std::max(row0, p * P - run.start_pos); t < row1; ++t) {
      const int64_t r = t - row0;
      const int64_t m = std::min(n, run.start_pos + t + 1 - p * P);  // keys of this page row t sees
      const float* qt = q + t * ldq;
      float page_max = -INFINITY;
      for (int64_t j = 0; j < m; ++j) {
        scores[j] = (kernels::Dot(qt, kr + j * half, half) + kernels::Dot(qt + half, vr + j * half, half)) * run.scale;
        page_max = std::max(page_max, scores[j]);
      }
      float* a = acc.data() + r * L;
      if (page_max > mx[r]) {
        const float rescale = std::exp(mx[r] - page_max);  // exp(-inf) = 0 on the first page
        kernels::Scale(a, rescale, L);
        sum[r] *= rescale;
        mx[r] = page_max;
      }
      for (int64_t j = 0; j < m; ++j) {
        const float wj = std::exp(scores[j] - mx[r]);
        sum[r] += wj;
        kernels::Axpy(wj, kr + j * half, a, half);           // c[0, half)
        kernels::Axpy(wj, vr + j * half, a + half, L - half);  // c[half, L)
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + (row0 + r) * ldo;
    std::memcpy(o, acc.data() + r * L, static_cast<size_t>(L) * 4);
    kernels::Scale(o, 1.0f / sum[r], L);
  }
}

// The latent rows of `keys` (ascending positions) gathered from the pages
// as f32 rows [n, W] into rows.
}  // namespace

void GatherLatentRows(const LatentRun& run, const int32_t* keys, int64_t n, float* rows) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, W = run.latent, half = W / 2;
  for (int64_t i = 0; i < n; ++i) {
    const cache::KvPage& page = run.kv->page(keys[i] / P);
    const int64_t j = keys[i] % P;
    float* dst = rows + i * W;
    if (layout.dtype == DType::kF32) {
      std::memcpy(dst, static_cast<const float*>(page.k(run.layer, 0)) + j * half, static_cast<size_t>(half) * 4);
      std::memcpy(dst + half, static_cast<const float*>(page.v(run.layer, 0)) + j * half, static_cast<size_t>(half) * 4);
    } else {
      const auto* k = static_cast<const uint16_t*>(page.k(run.layer, 0)) + j * half;
      const auto* v = static_cast<const uint16_t*>(page.v(run.layer, 0)) + j * half;
      for (int64_t e = 0; e < half; ++e) {
        dst[e] = Bf16ToFloat(k[e]);
        dst[half + e] = Bf16ToFloat(v[e]);
      }
    }
  }
}

// One query row's heads [h0, h1) over its selected keys (the decode shape):
// the selected latent rows are gathered, then attended as one block of keys
// every query sees. q_lat of head h at q + h W; the attended row (c in its
// first L values) to out + h W.
void AttendSelected(const LatentRun& run, const int32_t* keys, int64_t n, int64_t h0, int64_t h1, const float* q,
                    float* out) {
  const int64_t W = run.latent, L = run.rank;
  thread_local std::vector<float> rows;
  rows.resize(static_cast<size_t>(n * W));
  GatherLatentRows(run, keys, n, rows.data());
  if (W % 16 == 0) {
    kernels::AttentionQueries queries;
    queries.q = q + h0 * W;
    queries.ldq = 0;
    queries.out = out + h0 * W;
    queries.ldo = 0;
    queries.num_rows = 1;
    queries.group = h1 - h0;
    queries.head_dim = W;
    queries.first_pos = n - 1;  // every gathered key is visible
    queries.scale = run.scale;
    thread_local kernels::AttentionTile tile;
    tile.Begin(queries);
    tile.AddKeys(0, n, rows.data(), rows.data(), DType::kF32);
    tile.Finish();
    return;
  }
  thread_local std::vector<float> scores;
  scores.resize(static_cast<size_t>(n));
  for (int64_t h = h0; h < h1; ++h) {
    const float* qh = q + h * W;
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, scores[i] = kernels::Dot(qh, rows.data() + i * W, W) * run.scale);
    float sum = 0;
    float* o = out + h * W;
    std::fill(o, o + L, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      const float p = std::exp(scores[i] - mx);
      sum += p;
      kernels::Axpy(p, rows.data() + i * W, o, L);
    }
    kernels::Scale(o, 1.0f / sum, L);
  }
}


void AttendSelectedPart(const LatentRun& run, const int32_t* keys, int64_t n, int64_t heads, const float* q,
                        float* out, float* max, float* sum) {
  const int64_t W = run.latent;
  thread_local std::vector<float> rows;
  rows.resize(static_cast<size_t>(n * W));
  GatherLatentRows(run, keys, n, rows.data());
  kernels::AttentionQueries queries;
  queries.q = q;
  queries.out = out;
  queries.num_rows = 1;
  queries.group = heads;
  queries.head_dim = W;
  queries.first_pos = n - 1;
  queries.scale = run.scale;
  thread_local kernels::AttentionTile tile;
  tile.Begin(queries);
  tile.AddKeys(0, n, rows.data(), rows.data(), DType::kF32);
  tile.FinishPart(max, sum);
}

void AttendLatentRows(const LatentRun& run, int64_t row0, int64_t row1, int64_t h0, int64_t h1, const float* q,
                      int64_t ldq, float* out, int64_t ldo) {
  if (run.latent % 16 == 0) return AttendLatentTiled(run, row0, row1, h0, h1, q, ldq, out, ldo);
  for (int64_t h = h0; h < h1; ++h) AttendLatent(run, row0, row1, q + h * run.latent, ldq, out + h * run.latent, ldo);
}

void AttendSelectedBlock(const LatentRun& run, const KeySelection& sel, int64_t sel_row0, int64_t row0, int64_t row1,
                         int64_t h0, int64_t h1, const float* q, int64_t ldq, float* out, int64_t ldo) {
  const int64_t W = run.latent, rows = row1 - row0;
  // The union of the rows' selections (each sorted): a merge.
  thread_local std::vector<int32_t> keys, merged;
  keys.clear();
  for (int64_t r = row0; r < row1; ++r) {
    const int32_t* k = sel.keys.data() + (sel_row0 + r) * sel.top_k;
    merged.clear();
    std::set_union(keys.begin(), keys.end(), k, k + sel.count[sel_row0 + r], std::back_inserter(merged));
    keys.swap(merged);
  }
  kernels::AttentionQueries queries;
  queries.q = q + row0 * ldq + h0 * W;
  queries.ldq = ldq;
  queries.out = out + row0 * ldo + h0 * W;
  queries.ldo = ldo;
  queries.num_rows = rows;
  queries.group = h1 - h0;
  queries.head_dim = W;
  queries.first_pos = static_cast<int64_t>(keys.size()) - 1;  // the mask, not the position, decides
  queries.scale = run.scale;
  constexpr int64_t kKeysPerGather = 256;
  thread_local kernels::AttentionTile tile;
  thread_local std::vector<float> gathered;
  thread_local std::vector<uint8_t> visible;
  thread_local std::vector<int64_t> cursor;
  gathered.resize(static_cast<size_t>(kKeysPerGather * W));
  visible.resize(static_cast<size_t>(kKeysPerGather * rows));
  cursor.assign(static_cast<size_t>(rows), 0);
  tile.Begin(queries);
  const int64_t total = static_cast<int64_t>(keys.size());
  for (int64_t j0 = 0; j0 < total; j0 += kKeysPerGather) {
    const int64_t n = std::min(kKeysPerGather, total - j0);
    GatherLatentRows(run, keys.data() + j0, n, gathered.data());
    for (int64_t r = 0; r < rows; ++r) {  // walk each row's sorted selection beside the union
      const int32_t* k = sel.keys.data() + (sel_row0 + row0 + r) * sel.top_k;
      const int64_t count = sel.count[sel_row0 + row0 + r];
      int64_t& c = cursor[r];
      for (int64_t j = 0; j < n; ++j) {
        const bool hit = c < count && k[c] == keys[j0 + j];
        visible[j * rows + r] = hit;
        c += hit;
      }
    }
    tile.AddKeysMasked(j0, n, gathered.data(), gathered.data(), DType::kF32, visible.data());
  }
  tile.Finish();
}

}  // namespace lineage::engine
