#include "core/int_panel.h"

#include <cstring>

#include "core/quant_unpack.h"

namespace lineage::kernels {
namespace {

template <DType t>
void PackIntPanelOf(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p) {
  const int64_t num_blocks = W.cols() / 32, per_block = Info(t).block_elements / 32;
  const int64_t block_bytes = Info(t).block_bytes;
  p->q.assign(static_cast<size_t>(num_blocks * 32 * panel_rows), 0);
  p->scale.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0.0f);
  p->bias.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0.0f);
  p->zero.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0);
  quant::Unpacked u{};
  // The type's layout: one block unpacked says it for every block.
  quant::UnpackBlock<t>(W.row_ptr(r0), &u);
  p->halves = u.sub == 16;
  p->has_bias = u.has_bias;
  for (int64_t k = 0; k < nr; ++k) {
    const uint8_t* row = W.row_ptr(r0 + k);
    for (int64_t B = 0; B < num_blocks / per_block; ++B) {
      quant::UnpackBlock<t>(row + B * block_bytes, &u);
      for (int64_t s = 0; s < per_block; ++s) {
        const int64_t b = B * per_block + s;
        const int8_t* codes = u.q + 32 * s;
        for (int h = 0; h < (p->halves ? 2 : 1); ++h) {
          const int len = p->halves ? 16 : 32;
          const int64_t at = (b * 2 + h) * panel_rows + k;
          p->scale[at] = u.scale[p->halves ? 2 * s + h : s];
          int32_t sum = 0;
          for (int i = 0; i < len; ++i) sum += codes[len * h + i];
          p->zero[at] = -128 * sum;
          if (p->has_bias) p->bias[at] = u.bias[p->halves ? 2 * s + h : s];
        }
        uint8_t* dst = p->q.data() + b * 32 * panel_rows + k * 4;
        for (int g = 0; g < 8; ++g) std::memcpy(dst + g * panel_rows * 4, codes + g * 4, 4);
      }
    }
  }
}

}  // namespace

void PackIntPanel(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p) {
  switch (W.dtype) {
#define LINEAGE_PACK_CASE(T) \
  case DType::T: return PackIntPanelOf<DType::T>(W, r0, nr, panel_rows, p);
    LINEAGE_PACK_CASE(kQ8_0)
    LINEAGE_PACK_CASE(kQ4_0)
    LINEAGE_PACK_CASE(kQ4_1)
    LINEAGE_PACK_CASE(kQ5_0)
    LINEAGE_PACK_CASE(kQ5_1)
    LINEAGE_PACK_CASE(kIQ4_NL)
    LINEAGE_PACK_CASE(kQ4_K)
    LINEAGE_PACK_CASE(kQ5_K)
    LINEAGE_PACK_CASE(kIQ4_XS)
    LINEAGE_PACK_CASE(kQ2_K)
    LINEAGE_PACK_CASE(kQ3_K)
    LINEAGE_PACK_CASE(kQ6_K)
#undef LINEAGE_PACK_CASE
    default: return;
  }
}

}  // namespace lineage::kernels
