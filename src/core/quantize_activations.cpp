// Activation quantisation for the integer dot-product kernels
// (gemm_internal.h): per block of 32 (QuantizedActivations, Q8_0 weights)
// and per block of 256 with sub-block sums (QuantizedActivationsK, the
// super-block types). Runs once per token and matrix call, beside
// tokens x rows of work, so AVX2 (the baseline) is enough.
#include <immintrin.h>

#include <cstring>

#include "core/gemm_internal.h"
#include "core/lane_order.h"

namespace lineage::kernels {
namespace {

float MaxAbs(const float* x, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// The sums of 16 int8 values at q, as int16.
int16_t Sum16(const int8_t* q) {
  const __m128i v = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
  const __m128i w = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 8)));
  __m128i s = _mm_add_epi16(v, w);
  s = _mm_hadd_epi16(s, s);
  s = _mm_hadd_epi16(s, s);
  s = _mm_hadd_epi16(s, s);
  return static_cast<int16_t>(_mm_extract_epi16(s, 0));
}

}  // namespace

float QuantizeBlock32(const float* x, __m256i* q, float d) {
  if (d < 0) d = MaxAbs(x, 32) / 127.0f;
  const __m256 inv = _mm256_set1_ps(d > 0 ? 1.0f / d : 0.0f);
  __m256i i[4];
  for (int k = 0; k < 4; ++k) i[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), inv));
  // |q| <= 127 so the saturating packs are exact; they interleave 128-bit
  // lanes, which the final permute undoes.
  __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
  *q = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  return d;
}

float QuantizeBlock32Wide(const float* x, uint8_t hi[32], uint8_t lo[32], int32_t* sum, int32_t* sum_lo) {
  const float d = MaxAbs(x, 32) / 32767.0f;
  const __m256 inv = _mm256_set1_ps(d > 0 ? 1.0f / d : 0.0f);
  const __m256i bound = _mm256_set1_epi32(32767), offset = _mm256_set1_epi32(32768), low = _mm256_set1_epi32(255);
  __m256i total = _mm256_setzero_si256(), first = _mm256_setzero_si256(), h[4], l[4];
  for (int k = 0; k < 4; ++k) {
    __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), inv));
    q = _mm256_max_epi32(_mm256_min_epi32(q, bound), _mm256_sub_epi32(_mm256_setzero_si256(), bound));
    total = _mm256_add_epi32(total, q);
    if (k == 1) first = total;
    const __m256i u = _mm256_add_epi32(q, offset);
    h[k] = _mm256_srli_epi32(u, 8), l[k] = _mm256_and_si256(u, low);
  }
  // Bytes 0..255 pack unsaturated; the packs interleave 128-bit lanes, which
  // the permute undoes (as QuantizeBlock32).
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i hb = _mm256_packus_epi16(_mm256_packus_epi32(h[0], h[1]), _mm256_packus_epi32(h[2], h[3]));
  const __m256i lb = _mm256_packus_epi16(_mm256_packus_epi32(l[0], l[1]), _mm256_packus_epi32(l[2], l[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi), _mm256_permutevar8x32_epi32(hb, order));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo), _mm256_permutevar8x32_epi32(lb, order));
  alignas(32) int32_t s[8], f[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(s), total);
  _mm256_store_si256(reinterpret_cast<__m256i*>(f), first);
  *sum = 0, *sum_lo = 0;
  for (int i = 0; i < 8; ++i) *sum += s[i], *sum_lo += f[i];
  return d;
}

void QuantizeActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivations* out) {
  out->num_tokens = T;
  out->cols = cols;
  out->q.resize(static_cast<size_t>(T * cols));
  out->scale.resize(static_cast<size_t>(T * (cols / 32)));
  out->scale_grouped.resize(static_cast<size_t>(T * (cols / 32)));
  out->sum128.resize(static_cast<size_t>(T * (cols / 32)));
  out->scale_sum.resize(static_cast<size_t>(T * (cols / 32) * 2));
  const int64_t num_blocks = cols / 32, grouped = num_blocks / 16 * 16;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < num_blocks; ++b) {
      __m256i q;
      out->scale[t * num_blocks + b] = QuantizeBlock32(X + t * ldx + b * 32, &q);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out->q.data() + t * cols + b * 32), q);
    }
    for (int64_t b = 0; b < num_blocks; ++b) {
      const int64_t from = b < grouped ? b / 16 * 16 + kQ8GroupOrder[b % 16] : b;
      const int8_t* qb = out->q.data() + t * cols + from * 32;
      out->scale_grouped[t * num_blocks + b] = out->scale[t * num_blocks + from];
      out->sum128[t * num_blocks + b] = 128 * (Sum16(qb) + Sum16(qb + 16));
      const int8_t* qo = out->q.data() + t * cols + b * 32;
      const float d = out->scale[t * num_blocks + b];
      out->scale_sum[2 * (t * num_blocks + b)] = d;
      out->scale_sum[2 * (t * num_blocks + b) + 1] = d * static_cast<float>(Sum16(qo) + Sum16(qo + 16));
    }
  }
}

void QuantizeActivationsK(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivationsK* out,
                          bool lanes) {
  out->num_tokens = T;
  out->cols = cols;
  out->q.resize(static_cast<size_t>(T * cols));
  // The reordered copy only the active ISA's kernels read (nibble order:
  // AVX-512 Q4_K; pair order: AVX2 IQ4_XS).
  const bool wide = ActiveIsa() == Isa::kAvx512;
  out->q_nibble_order.resize(wide ? static_cast<size_t>(T * cols) : 0);
  out->q_pair_order.resize(wide ? 0 : static_cast<size_t>(T * cols));
  out->scale.resize(static_cast<size_t>(T * (cols / 256)));
  const int64_t num_blocks = cols / 256, num_pairs = (num_blocks + 1) / 2;
  out->scale_pairs.resize(wide ? static_cast<size_t>(T * num_pairs * QuantizedActivationsK::kPairScaleFloats) : 0);
  out->zero_point_sum32.assign(wide ? static_cast<size_t>(T * num_pairs * 16) : 0, 0.0f);
  out->zero_point_sum16.resize(wide ? static_cast<size_t>(T * (cols / 16)) : 0);
  out->sum16.resize(static_cast<size_t>(T * (cols / 16)));
  out->sum32.resize(static_cast<size_t>(T * (cols / 32)));
  out->q_lanes16.resize(lanes ? static_cast<size_t>(T * cols) : 0);
  out->q_lanes32.resize(lanes ? static_cast<size_t>(T * cols) : 0);
  out->lane_offsets16.resize(lanes ? static_cast<size_t>(T * (cols / 16)) : 0);
  out->lane_scales.resize(lanes ? static_cast<size_t>(T * num_blocks) : 0);
  out->lane_scale_pairs.resize(lanes ? static_cast<size_t>(T * num_pairs * 16) : 0);
  out->lane_mins32.resize(lanes ? static_cast<size_t>(T * num_pairs * 16) : 0);
  for (int64_t t = 0; t < T; ++t) {
    const float* x = X + t * ldx;
    int8_t* q = out->q.data() + t * cols;
    int16_t* s16 = out->sum16.data() + t * (cols / 16);
    int16_t* s32 = out->sum32.data() + t * (cols / 32);
    for (int64_t b = 0; b < cols / 256; ++b) {
      const float d = MaxAbs(x + b * 256, 256) / 127.0f;
      out->scale[t * (cols / 256) + b] = d;
      for (int64_t k = 0; k < 8; ++k) {
        __m256i v;
        QuantizeBlock32(x + b * 256 + 32 * k, &v, d);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * 256 + 32 * k), v);
      }
    }
    if (wide) {
      int8_t* qn = out->q_nibble_order.data() + t * cols;
      for (int64_t i = 0; i < cols; i += 128) {
        constexpr int kFrom[4] = {0, 64, 32, 96};
        for (int k = 0; k < 4; ++k) std::memcpy(qn + i + 32 * k, q + i + kFrom[k], 32);
      }
    } else {
      int8_t* qp = out->q_pair_order.data() + t * cols;
      for (int64_t i = 0; i < cols; i += 64) {
        constexpr int kFrom[4] = {0, 32, 16, 48};
        for (int k = 0; k < 4; ++k) std::memcpy(qp + i + 16 * k, q + i + kFrom[k], 16);
      }
    }
    for (int64_t i = 0; i < cols / 16; ++i) s16[i] = Sum16(q + 16 * i);
    for (int64_t i = 0; i < cols / 32; ++i) s32[i] = static_cast<int16_t>(s16[2 * i] + s16[2 * i + 1]);
    if (lanes) {
      const float* xd = out->scale.data() + t * num_blocks;
      for (int64_t b = 0; b < num_blocks; ++b) {
        const int64_t at = b * T + t;  // block b, token t
        quant::PermuteToLanes(DType::kQ6_K_LANES, q + 256 * b, 256, out->q_lanes16.data() + at * 256);
        quant::PermuteToLanes(DType::kQ4_K_LANES, q + 256 * b, 256, out->q_lanes32.data() + at * 256);
        for (int i = 0; i < 16; ++i) out->lane_offsets16[static_cast<size_t>(at * 16 + i)] = -32 * s16[16 * b + i];
        out->lane_scales[static_cast<size_t>(at)] = xd[b];
      }
      for (int64_t p = 0; p < num_pairs; ++p)
        for (int h = 0; h < 2; ++h) {
          const int64_t b = 2 * p + h, at = (p * T + t) * 16 + 8 * h;
          for (int i = 0; i < 8; ++i) {
            out->lane_scale_pairs[static_cast<size_t>(at + i)] = b < num_blocks ? xd[b] : 0.0f;
            const float sum = b < num_blocks ? static_cast<float>(s32[8 * b + i]) : 0.0f;
            out->lane_mins32[static_cast<size_t>(at + i)] = b < num_blocks ? -xd[b] * sum : 0.0f;
          }
        }
    }
    if (wide) {
      const float* xd = out->scale.data() + t * num_blocks;
      for (int64_t p = 0; p < num_pairs; ++p) {
        const float dx0 = xd[2 * p], dx1 = 2 * p + 1 < num_blocks ? xd[2 * p + 1] : 0.0f;
        float* g = out->scale_pairs.data() + (t * num_pairs + p) * QuantizedActivationsK::kPairScaleFloats;
        for (int k = 0; k < 16; ++k) g[k] = k % 4 < 2 ? dx0 : dx1;
      }
      float* z16 = out->zero_point_sum16.data() + t * (cols / 16);
      float* z32 = out->zero_point_sum32.data() + t * num_pairs * 16;
      for (int64_t i = 0; i < cols / 16; ++i) z16[i] = -xd[i / 16] * static_cast<float>(s16[i]);
      for (int64_t i = 0; i < cols / 32; ++i) z32[i] = -xd[i / 8] * static_cast<float>(s32[i]);
    }
  }
}

}  // namespace lineage::kernels
