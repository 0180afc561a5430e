// Integer tiles with AVX-512 VNNI (gemm_int_tiles.inc): panels of 16 rows,
// tiles of 12 tokens, one vpdpbusd per 4 codes of 16 rows and a token.
// Per block and token: 8 vpdpbusd + 2 float ops (3 with a bias, 4 with a
// scale per 16) for 512 multiply-adds, against 32 FMAs on the fp32 path.
#include <cstring>

#include "core/gemm_internal.h"
#include "core/int_panel.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
namespace {

using namespace simd512;  // NOLINT: the .inc file is written against these names
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512

using VecI = __m512i;
constexpr int64_t kIntTokens = 12;
LINEAGE_AVX512 inline VecI IntLoad(const void* p) { return _mm512_loadu_si512(p); }
LINEAGE_AVX512 inline VecI IntSet1(int32_t v) { return _mm512_set1_epi32(v); }
LINEAGE_AVX512 inline VecF IntToFloat(VecI v) { return _mm512_cvtepi32_ps(v); }
LINEAGE_AVX512 inline VecI IntDot(VecI acc, VecI x, VecI w) { return _mm512_dpbusd_epi32(acc, x, w); }
LINEAGE_AVX512 inline VecI IntShl8(VecI v) { return _mm512_slli_epi32(v, 8); }
LINEAGE_AVX512 inline VecI IntAdd(VecI a, VecI b) { return _mm512_add_epi32(a, b); }
LINEAGE_AVX512 inline VecF IntBitsAsFloat(VecI v) { return _mm512_castsi512_ps(v); }

#include "core/gemm_int_tiles.inc"
#undef LINEAGE_SIMD_ATTR

}  // namespace

bool IntTileType(DType t) { return IsQuantized(t); }
int64_t IntTileRows() { return simd512::kLanes; }
int64_t IntTileTokens() { return kIntTokens; }

LINEAGE_AVX512 void GemmIntTiles(const TensorView& W, int64_t row_begin, int64_t row_end, const PackedIntActivations& px,
                                 float* Y, int64_t ldy) {
  int_tiles::Gemm(W, row_begin, row_end, px, Y, ldy);
}

}  // namespace lineage::kernels::avx512
