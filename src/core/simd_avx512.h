// 16-lane fp32 vector operations for the AVX-512 kernels (namespace simd512).
//
// simd_avx2.h declares the same names for 8 lanes (namespace simd256), so a
// kernel written once in a .inc file compiles for either ISA: the including
// file defines LINEAGE_SIMD_ATTR and opens the matching namespace. Every
// function here must only run when ActiveIsa() == Isa::kAvx512.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/isa.h"

// GCC 12 reports the deliberately undefined pass-through operands inside the
// AVX-512 intrinsic headers (_mm512_undefined_*) as uninitialised wherever
// they are inlined; the warning is about the library, not our code, and it
// can only be silenced for the rest of the including file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lineage::kernels::simd512 {

#define LINEAGE_SIMD512_FN LINEAGE_AVX512 static inline

using VecF = __m512;
constexpr int kLanes = 16;

LINEAGE_SIMD512_FN __mmask16 TailMask(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
}
LINEAGE_SIMD512_FN VecF Zero() { return _mm512_setzero_ps(); }
LINEAGE_SIMD512_FN VecF Set1(float a) { return _mm512_set1_ps(a); }
LINEAGE_SIMD512_FN VecF Load(const float* p) { return _mm512_loadu_ps(p); }
LINEAGE_SIMD512_FN VecF LoadPartial(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(TailMask(n), p); }
LINEAGE_SIMD512_FN void Store(float* p, VecF v) { _mm512_storeu_ps(p, v); }
// A non-temporal store (past the caches); p aligned to the vector.
LINEAGE_SIMD512_FN void StoreStream(float* p, VecF v) { _mm512_stream_ps(p, v); }
LINEAGE_SIMD512_FN void StorePartial(float* p, VecF v, int64_t n) { _mm512_mask_storeu_ps(p, TailMask(n), v); }
LINEAGE_SIMD512_FN VecF VAdd(VecF a, VecF b) { return _mm512_add_ps(a, b); }
LINEAGE_SIMD512_FN VecF VSub(VecF a, VecF b) { return _mm512_sub_ps(a, b); }
LINEAGE_SIMD512_FN VecF VMul(VecF a, VecF b) { return _mm512_mul_ps(a, b); }
LINEAGE_SIMD512_FN VecF VDiv(VecF a, VecF b) { return _mm512_div_ps(a, b); }
LINEAGE_SIMD512_FN VecF VMax(VecF a, VecF b) { return _mm512_max_ps(a, b); }
LINEAGE_SIMD512_FN VecF VMin(VecF a, VecF b) { return _mm512_min_ps(a, b); }
LINEAGE_SIMD512_FN VecF VFma(VecF a, VecF b, VecF c) { return _mm512_fmadd_ps(a, b, c); }

LINEAGE_SIMD512_FN float HSum(VecF v) {
  __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}
// Lane k = the sum of the lanes of v[k], for kLanes vectors at once (a
// transpose by unpacks and 128-bit shuffles): about 1.3 instructions per
// vector where HSum takes 7 on a serial chain. Each lane's sum is taken in
// the same order whatever k, so a vector's sum does not depend on where it
// sits in v.
LINEAGE_SIMD512_FN VecF HSumEach(const VecF* v) {
  __m512 s[8], t[4];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j)
    s[j] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * j], v[2 * j + 1]), _mm512_unpackhi_ps(v[2 * j], v[2 * j + 1]));
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512d a = _mm512_castps_pd(s[2 * j]), b = _mm512_castps_pd(s[2 * j + 1]);
    t[j] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // t[j]: each 128-bit lane holds a part of the sums of vectors 4j..4j+3.
  const __m512 u0 = _mm512_add_ps(_mm512_shuffle_f32x4(t[0], t[1], 0x88), _mm512_shuffle_f32x4(t[0], t[1], 0xDD));
  const __m512 u1 = _mm512_add_ps(_mm512_shuffle_f32x4(t[2], t[3], 0x88), _mm512_shuffle_f32x4(t[2], t[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(u0, u1, 0x88), _mm512_shuffle_f32x4(u0, u1, 0xDD));
}
// y[k] = the sum of the lanes of v[k] for k < n (v[k] for k >= n is
// overwritten): the row sums of a row kernel's group.
LINEAGE_SIMD512_FN void StoreEachSum(VecF* v, int64_t n, float* y) {
  for (int64_t k = n; k < kLanes; ++k) v[k] = _mm512_setzero_ps();
  StorePartial(y, HSumEach(v), n);
}
LINEAGE_SIMD512_FN float HMax(VecF v) {
  __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_max_ps(q, _mm_movehl_ps(q, q));
  q = _mm_max_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}

// p[idx[l]] for each lane l: the 16 elements of a column of a row-major block.
using VecI = __m512i;
LINEAGE_SIMD512_FN VecI StrideIndex(int64_t stride) {
  return _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(stride)),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
LINEAGE_SIMD512_FN VecF Gather(const float* p, VecI idx) { return _mm512_i32gather_ps(idx, p, 4); }
// Lanes [0, n) gathered, the others zero (and not read).
LINEAGE_SIMD512_FN VecF GatherPartial(const float* p, VecI idx, int64_t n) {
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), TailMask(n), idx, p, 4);
}

// Lanes [0, n) of a bf16 column pair: p[idx[l]] is a 32-bit word holding
// two adjacent bf16 values of one row; *even gets the first, *odd the second,
// widened to fp32. Lanes past n are zero.
LINEAGE_SIMD512_FN void GatherBf16Pairs(const uint16_t* p, VecI idx, int64_t n, VecF* even, VecF* odd) {
  const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), TailMask(n), idx, p, 4);
  *even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  *odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

// 16 stored bf16 / fp16 values widened exactly to fp32.
LINEAGE_SIMD512_FN VecF LoadBf16(const uint16_t* p) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
// 2 * kLanes stored bf16 values read as kLanes 32-bit words: *even gets
// p[0], p[2], ... and *odd p[1], p[3], ..., widened exactly to fp32 with one
// shift or mask each (no cross-lane shuffle). Pair with DeinterleavePairs.
LINEAGE_SIMD512_FN void LoadBf16Pairs(const uint16_t* p, VecF* even, VecF* odd) {
  __m512i v = _mm512_loadu_si512(p);
  // One load into a register: left alone, the compiler folds the load into
  // both the shift and the mask, and the line is read from L1 twice.
  __asm__("" : "+v"(v));
  *even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  *odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}
// out[0, kLanes) = x[0], x[2], ...; out[kLanes, 2 kLanes) = x[1], x[3], ...
LINEAGE_SIMD512_FN void DeinterleavePairs(const float* x, float* out) {
  const VecF a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  _mm512_storeu_ps(out, _mm512_permutex2var_ps(a, even, b));
  _mm512_storeu_ps(out + 16, _mm512_permutex2var_ps(a, _mm512_add_epi32(even, _mm512_set1_epi32(1)), b));
}
LINEAGE_SIMD512_FN VecF LoadF16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// 16 int8 values widened to fp32 (exact).
LINEAGE_SIMD512_FN VecF LoadI8(const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// exp(x) with a Cody-Waite reduction and a degree-6 polynomial (Cephes
// expf coefficients): within 2 ulp on [-87, 88]; inputs are clamped there, so
// exp of very negative x returns about 1e-38 instead of 0.
LINEAGE_SIMD512_FN VecF Exp(VecF x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  VecF n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  VecF r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  VecF y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

// log(x) for x > 0 (Cephes logf: the mantissa in [sqrt(1/2), sqrt(2)) and a
// degree-8 polynomial): within 2 ulp for normal x; x <= 0 and denormals give
// the log of the smallest normal float (-87.3), not -inf or NaN.
LINEAGE_SIMD512_FN VecF Log(VecF x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(1.17549435e-38f));
  const __m512i bits = _mm512_castps_si512(x);
  VecF e = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(127)));
  VecF m = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x3f800000)));
  // m in [1, 2): fold the upper part to [sqrt(1/2), 1) so that m - 1 is small.
  const __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f));
  const VecF r = _mm512_sub_ps(m, _mm512_set1_ps(1.0f));
  const VecF z = _mm512_mul_ps(r, r);
  VecF y = _mm512_set1_ps(7.0376836292e-2f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(-1.1514610310e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.1676998740e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(-1.2420140846e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.4249322787e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(-1.6668057665e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(2.0000714765e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(-2.4999993993e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(3.3333331174e-1f));
  y = _mm512_mul_ps(_mm512_mul_ps(y, r), z);
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(-2.12194440e-4f), y);
  y = _mm512_fnmadd_ps(z, _mm512_set1_ps(0.5f), y);
  return _mm512_fmadd_ps(e, _mm512_set1_ps(0.693359375f), _mm512_add_ps(r, y));
}

}  // namespace lineage::kernels::simd512
