// AVX-512 instantiation of attention_tile.inc.
#include <cmath>
#include <cstring>

#include "core/attention_tile_internal.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
using namespace simd512;  // NOLINT: the .inc is written against these names
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512

namespace {

// 16 score accumulators + 8 query vectors + 2 key broadcasts of 32 registers.
constexpr int kScoreKeys = 4;
constexpr int kScoreVecs = 4;
// 24 output accumulators + 4 value vectors + 1 probability broadcast.
constexpr int kValueQueries = 6;
constexpr int kValueVecs = 4;

LINEAGE_SIMD_ATTR inline void KeyPair(const float* p, VecF* a, VecF* b) {
  *a = Set1(p[0]);
  *b = Set1(p[1]);
}
// Two bf16 values in one 32-bit word: the first in the low half.
LINEAGE_SIMD_ATTR inline void KeyPair(const uint16_t* p, VecF* a, VecF* b) {
  int32_t word;
  std::memcpy(&word, p, 4);
  const __m512i w = _mm512_set1_epi32(word);
  *a = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  *b = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}
LINEAGE_SIMD_ATTR inline VecF LoadRow(const float* p) { return Load(p); }
LINEAGE_SIMD_ATTR inline VecF LoadRow(const uint16_t* p) { return LoadBf16(p); }
LINEAGE_SIMD_ATTR inline VecF MaskPast(VecF s, VecF limit, float key) {
  const __mmask16 visible = _mm512_cmp_ps_mask(limit, Set1(key), _CMP_GE_OQ);
  return _mm512_mask_blend_ps(visible, Set1(-INFINITY), s);
}

}  // namespace

#include "core/attention_tile.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx512
