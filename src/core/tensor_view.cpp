#include "core/tensor_view.h"

#include <algorithm>
#include <cstring>

#include "core/dequant.h"
#include "core/quant_blocks.h"

namespace lineage {

void DecodeToFloat(const TensorView& t, int64_t begin, int64_t n, float* out) {
  const uint8_t* base = static_cast<const uint8_t*>(t.data);
  const DTypeInfo& info = Info(t.dtype);
  const int64_t be = info.block_elements;
  if (be == 1) {
    quant::DequantizeBlocks(t.dtype, base + begin * info.block_bytes, n, out);
    return;
  }
  // Whole blocks straight into `out`; a partial block at either end through
  // a scratch block.
  float scratch[quant::kQK_K];
  int64_t e = begin;
  const int64_t end = begin + n;
  while (e < end) {
    const int64_t block = e / be, offset = e % be;
    const uint8_t* src = base + block * info.block_bytes;
    if (offset == 0 && end - e >= be) {
      const int64_t whole = (end - e) / be;
      quant::DequantizeBlocks(t.dtype, src, whole, out + (e - begin));
      e += whole * be;
      continue;
    }
    quant::DequantizeBlocks(t.dtype, src, 1, scratch);
    const int64_t take = std::min(be - offset, end - e);
    std::memcpy(out + (e - begin), scratch + offset, static_cast<size_t>(take) * 4);
    e += take;
  }
}

}  // namespace lineage
