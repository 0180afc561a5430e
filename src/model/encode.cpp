#include "model/encode.h"

#include "model/quantize_blocks.h"

#include <cassert>
#include <cmath>
#include <cstring>

namespace lineage::model {

void EncodeRow(const float* in, int64_t n, DType dtype, uint8_t* out) {
  switch (dtype) {
    case DType::kF32:
      std::memcpy(out, in, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = FloatToHalf(in[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b = FloatToBf16(in[i]);
        std::memcpy(out + 2 * i, &b, 2);
      }
      return;
    case DType::kQ8_0:
      assert(n % 32 == 0);
      for (int64_t b = 0; b < n / 32; ++b) {
        const float* x = in + 32 * b;
        uint8_t* block = out + 34 * b;
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        uint16_t dh = FloatToHalf(d);
        std::memcpy(block, &dh, 2);
        for (int j = 0; j < 32; ++j) block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
      }
      return;
    default:
      assert(CanQuantize(dtype) && "EncodeRow: no encoder for this dtype");
      QuantizeRow(dtype, in, n, out);
      return;
  }
}

void RoundTrip(float* values, int64_t n, DType dtype) {
  if (dtype == DType::kF32) return;
  std::vector<uint8_t> bytes(static_cast<size_t>(RowBytes(dtype, n)));
  EncodeRow(values, n, dtype, bytes.data());
  TensorView v;
  v.dtype = dtype;
  v.shape = {n};
  v.data = bytes.data();
  v.nbytes = static_cast<int64_t>(bytes.size());
  DecodeToFloat(v, 0, n, values);
}

std::vector<float> DecodeAll(const TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  DecodeToFloat(t, 0, t.numel(), out.data());
  return out;
}

float SsmAFromALog(float a_log) { return -std::exp(a_log); }

}  // namespace lineage::model
