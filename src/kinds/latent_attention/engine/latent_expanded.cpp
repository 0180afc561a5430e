// The expanded path of latent attention (latent_paths.h): the keys a run
// needs are gathered once as latent rows; each head then expands them a
// block at a time into its own keys [W_k,h c | k_pe] and values W_v,h c
// (two Gemms over the block) and attends them with un-absorbed queries.
// Keys and values are padded with zeros to one width, a multiple of 16,
// so one AttentionTile takes both.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"
#include "kinds/latent_attention/engine/latent_paths.h"

namespace lineage::engine {
namespace {

// Keys expanded per step of a head: a block the tile takes whole.
constexpr int64_t kExpandKeys = 256;

int64_t PaddedWidth(const LatentHeadWidths& w) { return (std::max(w.dn + w.dr, w.dv) + 15) / 16 * 16; }

}  // namespace

void PrepareExpandedKeys(const LatentRun& run, int64_t num_rows, const KeySelection* sel, int64_t sel_row0,
                         ExpandedKeys* out) {
  out->keys.clear();
  out->visible.clear();
  if (sel == nullptr) {
    const int64_t n = run.start_pos + num_rows;
    out->keys.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) out->keys[j] = static_cast<int32_t>(j);
  } else {
    const int64_t n = run.start_pos + num_rows;
    std::vector<int32_t> slot(static_cast<size_t>(n), -1);
    for (int64_t r = 0; r < num_rows; ++r) {
      const int32_t* k = sel->keys.data() + (sel_row0 + r) * sel->top_k;
      for (int64_t i = 0; i < sel->count[sel_row0 + r]; ++i) slot[k[i]] = 0;
    }
    for (int64_t j = 0; j < n; ++j)
      if (slot[j] == 0) {
        slot[j] = static_cast<int32_t>(out->keys.size());
        out->keys.push_back(static_cast<int32_t>(j));
      }
    out->visible.assign(out->keys.size() * static_cast<size_t>(num_rows), 0);
    for (int64_t r = 0; r < num_rows; ++r) {
      const int32_t* k = sel->keys.data() + (sel_row0 + r) * sel->top_k;
      for (int64_t i = 0; i < sel->count[sel_row0 + r]; ++i) out->visible[slot[k[i]] * num_rows + r] = 1;
    }
  }
  out->rows.resize(out->keys.size() * static_cast<size_t>(run.latent));
  GatherLatentRows(run, out->keys.data(), static_cast<int64_t>(out->keys.size()), out->rows.data());
}

void AttendExpandedHead(const LatentRun& run, const ExpandedKeys& keys, int64_t num_rows, const LatentHeadWidths& w,
                        const float* wk_h, const TensorView& v_b_h, int64_t h, const float* q, int64_t ldq,
                        float* out, int64_t ldo) {
  const int64_t W = run.latent, L = run.rank, dq = w.dn + w.dr, hd = PaddedWidth(w);
  const bool sparse = !keys.visible.empty();
  thread_local std::vector<float> qh, oh, kb, vb;
  qh.assign(static_cast<size_t>(num_rows * hd), 0.0f);
  oh.resize(static_cast<size_t>(num_rows * hd));
  kb.assign(static_cast<size_t>(kExpandKeys * hd), 0.0f);
  vb.assign(static_cast<size_t>(kExpandKeys * hd), 0.0f);
  for (int64_t t = 0; t < num_rows; ++t) std::memcpy(&qh[t * hd], q + t * ldq + h * dq, static_cast<size_t>(dq) * 4);
  kernels::AttentionQueries queries;
  queries.q = qh.data();
  queries.ldq = hd;
  queries.out = oh.data();
  queries.ldo = hd;
  queries.num_rows = num_rows;
  queries.group = 1;
  queries.head_dim = hd;
  // Dense, or a sparse run whose rows together select every key (early in
  // a sequence, under top_k): key positions are their indices, so the tile
  // masks causally and skips the keys past the last row; otherwise the
  // selection (causal by construction) masks.
  const int64_t total = static_cast<int64_t>(keys.keys.size());
  const bool by_position = total == run.start_pos + num_rows;
  queries.first_pos = by_position ? run.start_pos : total;
  queries.scale = run.scale;
  TensorView wk;
  wk.dtype = DType::kF32;
  wk.shape = {w.dn, L};
  wk.data = wk_h;
  wk.nbytes = w.dn * L * 4;
  thread_local kernels::AttentionTile tile;
  tile.Begin(queries);
  for (int64_t j0 = 0; j0 < total; j0 += kExpandKeys) {
    const int64_t n = std::min(kExpandKeys, total - j0);
    const float* c = keys.rows.data() + j0 * W;
    kernels::Gemm(wk, c, W, kb.data(), hd, n, nullptr);     // nope keys W_k,h c
    kernels::Gemm(v_b_h, c, W, vb.data(), hd, n, nullptr);  // values W_v,h c
    for (int64_t j = 0; j < n; ++j) std::memcpy(&kb[j * hd + w.dn], c + j * W + L, static_cast<size_t>(w.dr) * 4);
    if (sparse) {
      tile.AddKeysMasked(j0, n, kb.data(), vb.data(), DType::kF32, keys.visible.data() + j0 * num_rows);
    } else {
      tile.AddKeys(j0, n, kb.data(), vb.data(), DType::kF32);
    }
  }
  tile.Finish();
  for (int64_t t = 0; t < num_rows; ++t)
    std::memcpy(out + t * ldo + h * w.dv, &oh[t * hd], static_cast<size_t>(w.dv) * 4);
}

}  // namespace lineage::engine
