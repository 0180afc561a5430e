// Softmax self-attention mixer over the paged KV, for every segment:
//   q (| gate) = q_proj xn     qwen3_5: [q_h | gate_h] interleaved per head
//   k, v       = k_proj xn, v_proj xn
//   q, k       = rmsnorm per head (q_norm, k_norm), then RoPE on the first
//                rope_dims dims
//   K, V rows  -> the sequence's pages at their positions
//   a          = causal GQA softmax attention over the pages
//   out        = o_proj( a * sigmoid(gate) )   (gate only for qwen3_5)
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernels.h"
#include "engine/layers.h"
#include "engine/multi_gemm.h"
#include "engine/paged_attention.h"
#include "engine/rope.h"

namespace lineage::engine {
namespace {

void WriteKv(const float* k, const float* v, int64_t attn_index, const Segment& s, int64_t num_kv_heads,
             int64_t hd) {
  cache::PageTable& table = s.seq->kv();
  for (int64_t t = 0; t < s.num_tokens; ++t) {
    const int64_t row = (s.row_begin + t) * num_kv_heads * hd;
    for (int64_t h = 0; h < num_kv_heads; ++h) {
      table.WriteRow(attn_index, h, s.start_pos() + t, k + row + h * hd, v + row + h * hd);
    }
  }
}

// k, v [R, kv_dim] as projected: k normed per head and rotated at its
// position, both written to the pages; ctx.ws.rope keeps each row's table.
void StoreKeysValues(const model::FullAttentionWeights& w, int64_t attn_index, const StepContext& ctx, float* k,
                     const float* v) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, nkv = c.num_kv_heads, hd = c.head_dim, rd = c.rope_dims;
  const int64_t kv_dim = nkv * hd;
  kernels::RmsNorm(k, w.k_norm.data(), static_cast<float>(c.rms_eps), R * nkv, hd, k);
  for (const Segment& s : ctx.batch.segments) {
    float* table = ctx.ws.rope.data() + s.row_begin * rd;
    RopeTable(s.start_pos(), s.num_tokens, rd, c.rope_theta, table);
    ApplyRope(k + s.row_begin * kv_dim, s.num_tokens, kv_dim, nkv, hd, rd, table);
    WriteKv(k, v, attn_index, s, nkv, hd);
  }
}

}  // namespace

void WriteAttentionKv(const model::FullAttentionWeights& w, int64_t attn_index, const StepContext& ctx,
                      const float* xn) {
  const int64_t R = ctx.batch.num_rows, kv_dim = ctx.config.num_kv_heads * ctx.config.head_dim;
  float* k = ctx.ws.kv0.data();
  float* v = ctx.ws.kv1.data();
  MultiGemm({{&w.k_proj, k, kv_dim}, {&w.v_proj, v, kv_dim}}, xn, ctx.config.hidden, R, ctx.pool);
  StoreKeysValues(w, attn_index, ctx, k, v);
}

void SelfAttention(const model::FullAttentionWeights& w, int64_t attn_index, const StepContext& ctx,
                   const float* xn, float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden;
  const int64_t nh = c.num_heads, nkv = c.num_kv_heads, hd = c.head_dim, rd = c.rope_dims;
  const int64_t q_dim = nh * hd, kv_dim = nkv * hd;
  const bool gated = c.attn_output_gate;
  const float eps = static_cast<float>(c.rms_eps);

  float* qg = ctx.ws.wide0.data();    // [R, q_dim * (gated ? 2 : 1)]
  float* att = ctx.ws.wide1.data();   // [R, q_dim]
  float* q = ctx.ws.mid0.data();      // [R, q_dim]
  float* gate = ctx.ws.mid1.data();   // [R, q_dim]
  float* k = ctx.ws.kv0.data();       // [R, kv_dim]
  float* v = ctx.ws.kv1.data();       // [R, kv_dim]
  float* rope = ctx.ws.rope.data();   // [R, rd]
  MultiGemm({{&w.q_proj, gated ? qg : q, gated ? 2 * q_dim : q_dim}, {&w.k_proj, k, kv_dim}, {&w.v_proj, v, kv_dim}},
            xn, H, R, ctx.pool);
  if (gated) {
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t h = 0; h < nh; ++h) {
        const float* src = qg + r * 2 * q_dim + h * 2 * hd;
        std::memcpy(q + r * q_dim + h * hd, src, static_cast<size_t>(hd) * 4);
        std::memcpy(gate + r * q_dim + h * hd, src + hd, static_cast<size_t>(hd) * 4);
      }
    }
  }
  kernels::RmsNorm(q, w.q_norm.data(), eps, R * nh, hd, q);
  StoreKeysValues(w, attn_index, ctx, k, v);
  const std::vector<Segment>& segs = ctx.batch.segments;
  for (const Segment& s : segs) ApplyRope(q + s.row_begin * q_dim, s.num_tokens, q_dim, nh, hd, rd, rope + s.row_begin * rd);

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  thread_local std::vector<AttentionRows> runs;
  runs.clear();
  for (const Segment& s : segs) {
    runs.push_back({{&s.seq->kv(), attn_index, s.start_pos(), nh, scale, s.rows_as_decode},
                    q + s.row_begin * q_dim,
                    att + s.row_begin * q_dim,
                    s.num_tokens});
  }
  AttendRuns(runs, ctx.pool);

  if (gated) {
    kernels::Sigmoid(gate, gate, R * q_dim);
    for (int64_t i = 0; i < R * q_dim; i += 8) {  // q_dim is a multiple of 8 (head_dim 64/128/256)
      _mm256_storeu_ps(att + i, _mm256_mul_ps(_mm256_loadu_ps(att + i), _mm256_loadu_ps(gate + i)));
    }
  }
  kernels::Gemm(w.o_proj, att, q_dim, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
