#include "core/tensor_view.h"

#include <cassert>
#include <cstring>

namespace lineage {

void DecodeToFloat(const TensorView& t, int64_t begin, int64_t n, float* out) {
  const uint8_t* base = static_cast<const uint8_t*>(t.data);
  switch (t.dtype) {
    case DType::kF32:
      std::memcpy(out, base + begin * 4, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16: {
      const uint16_t* p = reinterpret_cast<const uint16_t*>(base) + begin;
      for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(p[i]);
      return;
    }
    case DType::kBF16: {
      const uint16_t* p = reinterpret_cast<const uint16_t*>(base) + begin;
      for (int64_t i = 0; i < n; ++i) out[i] = Bf16ToFloat(p[i]);
      return;
    }
    case DType::kQ8_0: {
      for (int64_t i = 0; i < n; ++i) {
        int64_t e = begin + i;
        const uint8_t* block = base + (e / 32) * 34;
        uint16_t d;
        std::memcpy(&d, block, 2);
        out[i] = HalfToFloat(d) * static_cast<float>(static_cast<int8_t>(block[2 + e % 32]));
      }
      return;
    }
    case DType::kQ4_K:
    case DType::kQ6_K:
      assert(false && "Q4_K/Q6_K decoding is not implemented yet");
      return;
  }
}

}  // namespace lineage
