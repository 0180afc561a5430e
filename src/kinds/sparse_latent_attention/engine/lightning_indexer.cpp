#include "kinds/sparse_latent_attention/engine/lightning_indexer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels.h"
#include "engine/multi_gemm.h"
#include "engine/rope.h"

namespace lineage::engine {
namespace {

// Rows scored together: their score rows (rows x context floats) stay in a
// few MiB at long contexts.
constexpr int64_t kRowsPerBlock = 32;
// Pages of keys per task: enough work per task to amortise it.
constexpr int64_t kPagesPerTask = 8;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

void HadamardInPlace(float* x, int64_t n) {
  for (int64_t len = 1; len < n; len <<= 1)
    for (int64_t i = 0; i < n; i += 2 * len)
      for (int64_t j = i; j < i + len; ++j) {
        const float a = x[j], b = x[j + len];
        x[j] = a + b;
        x[j + len] = a - b;
      }
  kernels::Scale(x, 1.0f / std::sqrt(static_cast<float>(n)), n);
}

void SelectKeys(const model::IndexerWeights& w, int64_t index_layer, const StepContext& ctx, const float* xn,
                const float* qr, const float* rope, KeySelection* sel) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden, Hi = c.indexer.heads, D = c.indexer.dim;
  const int64_t dr = c.mla.qk_rope_dim, K = c.indexer.top_k;
  LatentScratch& ls = ctx.ws.latent;
  float* iq = ls.indexer.q.data();   // [R, Hi D]
  float* ik = ls.indexer.k.data();   // [R, D]
  float* iw = ls.indexer.w.data();   // [R, Hi]
  kernels::Gemm(w.q_b, qr, c.mla.q_lora_rank, iq, Hi * D, R, ctx.pool);
  MultiGemm({{&w.k, ik, D}, {&w.weights_proj, iw, Hi}}, xn, H, R, ctx.pool);

  // Keys: LayerNorm (eps may be 0: glm-dsa), RoPE of the first dr dims of
  // every head ([rope | nope]), Hadamard; then into the pages.
  const double eps = c.indexer.norm_eps;
  const bool rotate = IsPowerOfTwo(D);
  for (int64_t r = 0; r < R; ++r) {
    float* k = ik + r * D;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < D; ++i) mean += k[i];
    mean /= static_cast<double>(D);
    for (int64_t i = 0; i < D; ++i) var += (k[i] - mean) * (k[i] - mean);
    const float inv = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(D) + eps));
    for (int64_t i = 0; i < D; ++i) k[i] = (k[i] - static_cast<float>(mean)) * inv * w.k_norm[i] + w.k_norm_bias[i];
  }
  auto apply_rope = c.indexer.rope_neox ? ApplyRope : ApplyRopeInterleaved;
  apply_rope(ik, R, D, 1, D, dr, rope);
  apply_rope(iq, R, Hi * D, Hi, D, dr, rope);
  if (rotate) {
    for (int64_t r = 0; r < R; ++r) {
      HadamardInPlace(ik + r * D, D);
      for (int64_t h = 0; h < Hi; ++h) HadamardInPlace(iq + (r * Hi + h) * D, D);
    }
  }
  kernels::Scale(iw, static_cast<float>(1.0 / std::sqrt(static_cast<double>(D * Hi))), R * Hi);
  for (const Segment& s : ctx.batch.segments)
    for (int64_t t = 0; t < s.num_tokens; ++t)
      s.seq->kv().WriteIndexRow(index_layer, s.start_pos() + t, ik + (s.row_begin + t) * D);

  // Scores and selection, a block of rows of one segment at a time.
  sel->Reset(R, K);
  std::vector<float>& scores = ls.indexer.scores;  // shared by the tasks (not thread_local)
  for (const Segment& s : ctx.batch.segments) {
    const cache::PageTable& kv = s.seq->kv();
    const cache::KvLayout& layout = kv.layout();
    const int64_t P = layout.page_tokens;
    for (int64_t r0 = 0; r0 < s.num_tokens; r0 += kRowsPerBlock) {
      const int64_t r1 = std::min(s.num_tokens, r0 + kRowsPerBlock), rows = r1 - r0;
      const int64_t first_pos = s.start_pos() + r0, keys = s.start_pos() + r1;  // keys [0, keys)
      scores.resize(static_cast<size_t>(rows * keys));
      const int64_t pages = (keys + P - 1) / P, tasks = (pages + kPagesPerTask - 1) / kPagesPerTask;
      const float* q_rows = iq + (s.row_begin + r0) * Hi * D;
      const float* w_rows = iw + (s.row_begin + r0) * Hi;
      ctx.pool->parallel_for(tasks, [&](int64_t t0, int64_t t1, int) {
        // A task's pages' keys copied into one block (the copy is from L2
        // and cheap), so one Gemm packs the queries once for all of them.
        thread_local std::vector<float> dots;
        thread_local std::vector<uint8_t> block;
        const int64_t key_bytes = D * layout.element_bytes();
        dots.resize(static_cast<size_t>(rows * Hi * P * kPagesPerTask));
        block.resize(static_cast<size_t>(P * kPagesPerTask * key_bytes));
        for (int64_t task = t0; task < t1; ++task) {
          const int64_t p0 = task * kPagesPerTask, p1 = std::min(pages, p0 + kPagesPerTask);
          const int64_t k0 = p0 * P, n = std::min(keys, p1 * P) - k0;
          for (int64_t p = p0; p < p1; ++p)
            std::memcpy(block.data() + (p - p0) * P * key_bytes, kv.page(p).index_keys(index_layer),
                        static_cast<size_t>(std::min(P, keys - p * P) * key_bytes));
          TensorView view;
          view.dtype = layout.dtype;
          view.shape = {n, D};
          view.data = block.data();
          view.nbytes = n * key_bytes;
          if (s.rows_as_decode) {  // each row's scores as its own decode step computes them
            for (int64_t r = 0; r < rows; ++r)
              kernels::Gemm(view, q_rows + r * Hi * D, D, dots.data() + r * Hi * n, n, Hi, nullptr);
          } else {
            kernels::Gemm(view, q_rows, D, dots.data(), n, rows * Hi, nullptr);
          }
          for (int64_t r = 0; r < rows; ++r) {
            float* out = scores.data() + r * keys + k0;
            const int64_t visible = std::clamp<int64_t>(first_pos + r + 1 - k0, 0, n);  // keys s <= t
            std::fill(out, out + n, 0.0f);
            for (int64_t h = 0; h < Hi; ++h) {
              const float wh = w_rows[r * Hi + h];
              const float* d = dots.data() + (r * Hi + h) * n;
              for (int64_t j = 0; j < visible; ++j) out[j] += wh * std::max(0.0f, d[j]);
            }
            std::fill(out + visible, out + n, -INFINITY);
          }
        }
      });
      ctx.pool->parallel_for(rows, [&](int64_t a, int64_t b, int) {
        thread_local std::vector<int32_t> order;
        for (int64_t r = a; r < b; ++r) {
          const int64_t visible = first_pos + r + 1, take = std::min(K, visible);
          const float* row = scores.data() + r * keys;
          int32_t* out = sel->keys.data() + (s.row_begin + r0 + r) * K;
          if (take == visible) {
            for (int64_t j = 0; j < take; ++j) out[j] = static_cast<int32_t>(j);
          } else {
            order.resize(static_cast<size_t>(visible));
            for (int64_t j = 0; j < visible; ++j) order[j] = static_cast<int32_t>(j);
            // Best first; a lower position wins a tie (llama.cpp leaves ties unspecified).
            auto better = [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
            std::nth_element(order.begin(), order.begin() + (take - 1), order.end(), better);
            std::copy(order.begin(), order.begin() + take, out);
            std::sort(out, out + take);
          }
          sel->count[s.row_begin + r0 + r] = static_cast<int32_t>(take);
        }
      });
    }
  }
}

}  // namespace lineage::engine
