// Integer tiles on 256-bit registers (gemm_int_tiles.inc): panels of 8
// rows, tiles of 6 tokens. Two instruction paths:
//  - AVX-VNNI (vpdpbusd on ymm, e.g. Intel cores from Alder Lake on, which
//    lack AVX-512): one instruction per 4 codes of 8 rows and a token, for
//    every block type;
//  - plain AVX2: vpmaddubsw (unsigned activation bytes times signed codes,
//    summed in pairs to int16) then vpmaddwd by ones and an add. A pair
//    saturates int16 unless 2 * 255 * |code| <= 32767, so this path takes
//    only the types whose codes lie in [-64, 64] (all but Q8_0, IQ4_NL and
//    IQ4_XS, which decode to fp32 tiles there: their three integer
//    instructions per 32 products would be no faster than fp32 FMAs with
//    the sign trick they would need).
#include <cstring>

#include "core/gemm_internal.h"
#include "core/int_panel.h"
#include "core/simd_avx2.h"

namespace lineage::kernels::avx2 {
namespace {

// 6 fp32 + 6 int32 accumulators, codes, broadcast, scratch of 16 registers
// (4 or 5 tokens measured slower on plain AVX2 as well).
constexpr int64_t kIntTokens = 6;
using VecI = __m256i;
inline VecI IntLoad(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline VecI IntSet1(int32_t v) { return _mm256_set1_epi32(v); }
inline __m256 IntToFloat(VecI v) { return _mm256_cvtepi32_ps(v); }
inline VecI IntShl8(VecI v) { return _mm256_slli_epi32(v, 8); }
inline VecI IntAdd(VecI a, VecI b) { return _mm256_add_epi32(a, b); }
inline __m256 IntBitsAsFloat(VecI v) { return _mm256_castsi256_ps(v); }

namespace vnni {
using namespace simd256;  // NOLINT: the .inc file is written against these names
#define LINEAGE_SIMD_ATTR __attribute__((target("avxvnni")))
LINEAGE_SIMD_ATTR inline VecI IntDot(VecI acc, VecI x, VecI w) { return _mm256_dpbusd_avx_epi32(acc, x, w); }
#include "core/gemm_int_tiles.inc"
#undef LINEAGE_SIMD_ATTR
}  // namespace vnni

namespace plain {
using namespace simd256;  // NOLINT: the .inc file is written against these names
#define LINEAGE_SIMD_ATTR
// Measured against summing the int16 pairs of 2 or 4 groups before one
// vpmaddwd (exact for codes up to 16 or 32): slower here (206 against
// 172-195 tok/s on the 0.8B Q4_K_M prefill), the codes of several groups
// crowding the 16 registers.
inline VecI IntDot(VecI acc, VecI x, VecI w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1)));
}
#include "core/gemm_int_tiles.inc"
#undef LINEAGE_SIMD_ATTR
}  // namespace plain

}  // namespace

bool IntTileType(DType t) {
  if (!IsQuantized(t)) return false;
  if (AvxVnni()) return true;
  return t != DType::kQ8_0 && t != DType::kIQ4_NL && t != DType::kIQ4_XS;
}
int64_t IntTileRows() { return simd256::kLanes; }
int64_t IntTileTokens() { return kIntTokens; }

void GemmIntTiles(const TensorView& W, int64_t row_begin, int64_t row_end, const PackedIntActivations& px, float* Y,
                  int64_t ldy) {
  if (AvxVnni()) {
    vnni::int_tiles::Gemm(W, row_begin, row_end, px, Y, ldy);
  } else {
    plain::int_tiles::Gemm(W, row_begin, row_end, px, Y, ldy);
  }
}

}  // namespace lineage::kernels::avx2
