// 8-lane fp32 vector operations for the AVX2+FMA kernels (namespace simd256):
// the same names as simd_avx512.h, see there. Baseline ISA: always callable.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace lineage::kernels::simd256 {

#define LINEAGE_SIMD256_FN static inline

using VecF = __m256;
constexpr int kLanes = 8;

LINEAGE_SIMD256_FN __m256i TailMask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 8 ? n : 8)), idx);
}
LINEAGE_SIMD256_FN VecF Zero() { return _mm256_setzero_ps(); }
LINEAGE_SIMD256_FN VecF Set1(float a) { return _mm256_set1_ps(a); }
LINEAGE_SIMD256_FN VecF Load(const float* p) { return _mm256_loadu_ps(p); }
LINEAGE_SIMD256_FN VecF LoadPartial(const float* p, int64_t n) { return _mm256_maskload_ps(p, TailMask(n)); }
LINEAGE_SIMD256_FN void Store(float* p, VecF v) { _mm256_storeu_ps(p, v); }
LINEAGE_SIMD256_FN void StoreStream(float* p, VecF v) { _mm256_stream_ps(p, v); }
LINEAGE_SIMD256_FN void StorePartial(float* p, VecF v, int64_t n) { _mm256_maskstore_ps(p, TailMask(n), v); }
LINEAGE_SIMD256_FN VecF VAdd(VecF a, VecF b) { return _mm256_add_ps(a, b); }
LINEAGE_SIMD256_FN VecF VSub(VecF a, VecF b) { return _mm256_sub_ps(a, b); }
LINEAGE_SIMD256_FN VecF VMul(VecF a, VecF b) { return _mm256_mul_ps(a, b); }
LINEAGE_SIMD256_FN VecF VDiv(VecF a, VecF b) { return _mm256_div_ps(a, b); }
LINEAGE_SIMD256_FN VecF VMax(VecF a, VecF b) { return _mm256_max_ps(a, b); }
LINEAGE_SIMD256_FN VecF VMin(VecF a, VecF b) { return _mm256_min_ps(a, b); }
LINEAGE_SIMD256_FN VecF VFma(VecF a, VecF b, VecF c) { return _mm256_fmadd_ps(a, b, c); }

LINEAGE_SIMD256_FN float HSum(VecF v) {
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}
// Lane k = the sum of the lanes of v[k], for kLanes vectors at once (see
// simd_avx512.h).
LINEAGE_SIMD256_FN VecF HSumEach(const VecF* v) {
  __m256 s[4], t[2];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j)
    s[j] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * j], v[2 * j + 1]), _mm256_unpackhi_ps(v[2 * j], v[2 * j + 1]));
#pragma GCC unroll 2
  for (int j = 0; j < 2; ++j) {
    const __m256d a = _mm256_castps_pd(s[2 * j]), b = _mm256_castps_pd(s[2 * j + 1]);
    t[j] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(a, b)), _mm256_castpd_ps(_mm256_unpackhi_pd(a, b)));
  }
  return _mm256_add_ps(_mm256_permute2f128_ps(t[0], t[1], 0x20), _mm256_permute2f128_ps(t[0], t[1], 0x31));
}
// y[k] = the sum of the lanes of v[k] for k < n (v[k] for k >= n is
// overwritten): the row sums of a row kernel's group. (A masked store,
// vmaskmovps, is slow on AMD cores: only a short group pays a copy.)
LINEAGE_SIMD256_FN void StoreEachSum(VecF* v, int64_t n, float* y) {
  for (int64_t k = n; k < kLanes; ++k) v[k] = _mm256_setzero_ps();
  const VecF sums = HSumEach(v);
  if (n == kLanes) return _mm256_storeu_ps(y, sums);
  alignas(32) float all[kLanes];
  _mm256_store_ps(all, sums);
  std::memcpy(y, all, static_cast<size_t>(n) * sizeof(float));
}
LINEAGE_SIMD256_FN float HMax(VecF v) {
  __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  q = _mm_max_ps(q, _mm_movehl_ps(q, q));
  q = _mm_max_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}

using VecI = __m256i;
LINEAGE_SIMD256_FN VecI StrideIndex(int64_t stride) {
  return _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(stride)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
LINEAGE_SIMD256_FN VecF Gather(const float* p, VecI idx) { return _mm256_i32gather_ps(p, idx, 4); }
LINEAGE_SIMD256_FN VecF GatherPartial(const float* p, VecI idx, int64_t n) {
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(TailMask(n)), 4);
}

LINEAGE_SIMD256_FN void GatherBf16Pairs(const uint16_t* p, VecI idx, int64_t n, VecF* even, VecF* odd) {
  const __m256i v = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(p), idx,
                                                TailMask(n), 4);
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  *odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}

LINEAGE_SIMD256_FN VecF LoadBf16(const uint16_t* p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
// See simd512::LoadBf16Pairs and simd512::DeinterleavePairs.
LINEAGE_SIMD256_FN void LoadBf16Pairs(const uint16_t* p, VecF* even, VecF* odd) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  *odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}
LINEAGE_SIMD256_FN void DeinterleavePairs(const float* x, float* out) {
  const VecF a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
  // shuffle_ps works within 128-bit halves: [a0 a2 b0 b2 | a4 a6 b4 b6], then
  // the 64-bit permute puts the halves' pairs in order.
  const VecF even = _mm256_shuffle_ps(a, b, 0x88), odd = _mm256_shuffle_ps(a, b, 0xdd);
  _mm256_storeu_ps(out, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xd8)));
  _mm256_storeu_ps(out + 8, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), 0xd8)));
}
LINEAGE_SIMD256_FN VecF LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
LINEAGE_SIMD256_FN VecF LoadI8(const int8_t* p) {
  int64_t bytes;
  std::memcpy(&bytes, p, 8);
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes)));
}

// See simd512::Exp.
LINEAGE_SIMD256_FN VecF Exp(VecF x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  VecF n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  VecF r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  VecF y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

// log(x) for x > 0, as simd512::Log.
LINEAGE_SIMD256_FN VecF Log(VecF x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(1.17549435e-38f));
  const __m256i bits = _mm256_castps_si256(x);
  VecF e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)));
  VecF m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
  const VecF big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  e = _mm256_add_ps(e, _mm256_and_ps(big, _mm256_set1_ps(1.0f)));
  const VecF r = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
  const VecF z = _mm256_mul_ps(r, r);
  VecF y = _mm256_set1_ps(7.0376836292e-2f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(-1.1514610310e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.1676998740e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(-1.2420140846e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.4249322787e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(-1.6668057665e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(2.0000714765e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(-2.4999993993e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(3.3333331174e-1f));
  y = _mm256_mul_ps(_mm256_mul_ps(y, r), z);
  y = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
  return _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), _mm256_add_ps(r, y));
}

}  // namespace lineage::kernels::simd256
