// AVX2 instantiation of attention_tile.inc.
#include <cmath>
#include <cstring>

#include "core/attention_tile_internal.h"
#include "core/simd_avx2.h"

namespace lineage::kernels::avx2 {
using namespace simd256;  // NOLINT: the .inc is written against these names
#define LINEAGE_SIMD_ATTR

namespace {

// 8 score accumulators + 4 query vectors + 2 key broadcasts of 16 registers.
constexpr int kScoreKeys = 4;
constexpr int kScoreVecs = 2;
// 12 output accumulators + 2 value vectors + 1 probability broadcast.
constexpr int kValueQueries = 6;
constexpr int kValueVecs = 2;

inline void KeyPair(const float* p, VecF* a, VecF* b) {
  *a = Set1(p[0]);
  *b = Set1(p[1]);
}
// Two bf16 values in one 32-bit word: the first in the low half.
inline void KeyPair(const uint16_t* p, VecF* a, VecF* b) {
  int32_t word;
  std::memcpy(&word, p, 4);
  const __m256i w = _mm256_set1_epi32(word);
  *a = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  *b = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}
inline VecF LoadRow(const float* p) { return Load(p); }
inline VecF LoadRow(const uint16_t* p) { return LoadBf16(p); }
inline VecF MaskPast(VecF s, VecF limit, float key) {
  return _mm256_blendv_ps(Set1(-INFINITY), s, _mm256_cmp_ps(limit, Set1(key), _CMP_GE_OQ));
}

}  // namespace

#include "core/attention_tile.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
