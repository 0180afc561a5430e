#include "core/dequant.h"

#include <cstring>

#include "core/lane_order.h"
#include "core/quant_blocks.h"

// ggml evaluates d * q - m as a product rounded to float, then the
// difference; a fused multiply-add would differ in the last bit where the
// product is inexact. Keep the compiler from contracting.
#pragma GCC optimize("fp-contract=off")

namespace lineage::quant {
namespace {

float H(uint16_t h) { return HalfToFloat(h); }

void Q4_0(const BlockQ4_0& b, float* y) {
  const float d = H(b.d);
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((b.qs[j] & 15) - 8) * d;
    y[j + 16] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
  }
}

void Q4_1(const BlockQ4_1& b, float* y) {
  const float d = H(b.d), m = H(b.m);
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(b.qs[j] & 15) * d + m;
    y[j + 16] = static_cast<float>(b.qs[j] >> 4) * d + m;
  }
}

uint32_t HighBits(const uint8_t qh[4]) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  return h;
}

void Q5_0(const BlockQ5_0& b, float* y) {
  const float d = H(b.d);
  const uint32_t qh = HighBits(b.qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b.qs[j] & 15) | static_cast<int>((qh >> j) & 1) << 4;
    const int hi = (b.qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(lo - 16) * d;
    y[j + 16] = static_cast<float>(hi - 16) * d;
  }
}

void Q5_1(const BlockQ5_1& b, float* y) {
  const float d = H(b.d), m = H(b.m);
  const uint32_t qh = HighBits(b.qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b.qs[j] & 15) | static_cast<int>((qh >> j) & 1) << 4;
    const int hi = (b.qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(lo) * d + m;
    y[j + 16] = static_cast<float>(hi) * d + m;
  }
}

void Q8_0(const BlockQ8_0& b, float* y) {
  const float d = H(b.d);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
}

void IQ4_NL(const BlockIQ4_NL& b, float* y) {
  const float d = H(b.d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIQ4Values[b.qs[j] & 15]);
    y[j + 16] = d * static_cast<float>(kIQ4Values[b.qs[j] >> 4]);
  }
}

void MXFP4(const BlockMXFP4& b, float* y) {
  const float d = E8M0HalfOf(b.e);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kMXFP4Values[b.qs[j] & 15]);
    y[j + 16] = d * static_cast<float>(kMXFP4Values[b.qs[j] >> 4]);
  }
}

void Q2_K(const BlockQ2_K& b, float* y) {
  const float d = H(b.d), dmin = H(b.dmin);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const uint8_t sc = b.scales[8 * h + 2 * k + l / 16];
        const float dl = d * static_cast<float>(sc & 15), ml = dmin * static_cast<float>(sc >> 4);
        const int q = (b.qs[32 * h + l] >> (2 * k)) & 3;
        y[128 * h + 32 * k + l] = dl * static_cast<float>(q) - ml;
      }
}

void Q3_K(const BlockQ3_K& b, float* y) {
  const float d = H(b.d);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const float dl = d * static_cast<float>(ScaleQ3K(b.scales, 8 * h + 2 * k + l / 16));
        const int low = (b.qs[32 * h + l] >> (2 * k)) & 3;
        const int high = (b.hmask[l] >> (4 * h + k)) & 1;
        y[128 * h + 32 * k + l] = dl * static_cast<float>(low - (high ? 0 : 4));
      }
}

// Q4_K, and Q5_K when qh is set: the fifth bit of element 64p + l is bit 2p
// of qh[l], of element 64p + 32 + l bit 2p + 1.
void K4(uint16_t dh, uint16_t dminh, const uint8_t* scales, const uint8_t* qs, const uint8_t* qh, float* y) {
  const float d = H(dh), dmin = H(dminh);
  for (int p = 0; p < 4; ++p) {
    uint8_t sc0, m0, sc1, m1;
    ScaleMinK4(scales, 2 * p, &sc0, &m0);
    ScaleMinK4(scales, 2 * p + 1, &sc1, &m1);
    const float d0 = d * static_cast<float>(sc0), dm0 = dmin * static_cast<float>(m0);
    const float d1 = d * static_cast<float>(sc1), dm1 = dmin * static_cast<float>(m1);
    for (int l = 0; l < 32; ++l) {
      const int q0 = (qs[32 * p + l] & 15) + (qh ? ((qh[l] >> (2 * p)) & 1) * 16 : 0);
      const int q1 = (qs[32 * p + l] >> 4) + (qh ? ((qh[l] >> (2 * p + 1)) & 1) * 16 : 0);
      y[64 * p + l] = d0 * static_cast<float>(q0) - dm0;
      y[64 * p + 32 + l] = d1 * static_cast<float>(q1) - dm1;
    }
  }
}
void Q4_K(const BlockQ4_K& b, float* y) { K4(b.d, b.dmin, b.scales, b.qs, nullptr, y); }
void Q5_K(const BlockQ5_K& b, float* y) { K4(b.d, b.dmin, b.scales, b.qs, b.qh, y); }

void Q6_K(const BlockQ6_K& b, float* y) {
  const float d = H(b.d);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* L = b.ql + 64 * h;
    const uint8_t* Hb = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      const int q[4] = {
          ((L[l] & 15) | ((Hb[l] >> 0) & 3) << 4) - 32,
          ((L[l + 32] & 15) | ((Hb[l] >> 2) & 3) << 4) - 32,
          ((L[l] >> 4) | ((Hb[l] >> 4) & 3) << 4) - 32,
          ((L[l + 32] >> 4) | ((Hb[l] >> 6) & 3) << 4) - 32,
      };
      for (int m = 0; m < 4; ++m) {
        const int e = 128 * h + 32 * m + l;
        y[e] = d * static_cast<float>(b.scales[e / 16]) * static_cast<float>(q[m]);
      }
    }
  }
}

void IQ4_XS(const BlockIQ4_XS& b, float* y) {
  const float d = H(b.d);
  for (int s = 0; s < 8; ++s) {
    const float dl = d * static_cast<float>(ScaleIQ4XS(b, s));
    for (int j = 0; j < 16; ++j) {
      y[32 * s + j] = dl * static_cast<float>(kIQ4Values[b.qs[16 * s + j] & 15]);
      y[32 * s + 16 + j] = dl * static_cast<float>(kIQ4Values[b.qs[16 * s + j] >> 4]);
    }
  }
}

template <typename Block>
void Each(const uint8_t* src, int64_t n, float* out, int per_block, void (*fn)(const Block&, float*)) {
  for (int64_t i = 0; i < n; ++i) fn(*reinterpret_cast<const Block*>(src + i * sizeof(Block)), out + i * per_block);
}

}  // namespace

void DequantizeBlocks(DType t, const uint8_t* src, int64_t n, float* out) {
  switch (t) {
    case DType::kF32:
      std::memcpy(out, src, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = t == DType::kF16 ? HalfToFloat(h) : Bf16ToFloat(h);
      }
      return;
    case DType::kQ4_0: return Each<BlockQ4_0>(src, n, out, kQK, Q4_0);
    case DType::kQ4_1: return Each<BlockQ4_1>(src, n, out, kQK, Q4_1);
    case DType::kQ5_0: return Each<BlockQ5_0>(src, n, out, kQK, Q5_0);
    case DType::kQ5_1: return Each<BlockQ5_1>(src, n, out, kQK, Q5_1);
    case DType::kQ8_0: return Each<BlockQ8_0>(src, n, out, kQK, Q8_0);
    case DType::kIQ4_NL: return Each<BlockIQ4_NL>(src, n, out, kQK, IQ4_NL);
    case DType::kMXFP4: return Each<BlockMXFP4>(src, n, out, kQK, MXFP4);
    case DType::kQ2_K: return Each<BlockQ2_K>(src, n, out, kQK_K, Q2_K);
    case DType::kQ3_K: return Each<BlockQ3_K>(src, n, out, kQK_K, Q3_K);
    case DType::kQ4_K: return Each<BlockQ4_K>(src, n, out, kQK_K, Q4_K);
    case DType::kQ5_K: return Each<BlockQ5_K>(src, n, out, kQK_K, Q5_K);
    case DType::kQ6_K: return Each<BlockQ6_K>(src, n, out, kQK_K, Q6_K);
    case DType::kIQ4_XS: return Each<BlockIQ4_XS>(src, n, out, kQK_K, IQ4_XS);
    case DType::kQ4_K_LANES:
    case DType::kQ6_K_LANES: {
      // The file-order block back, decoded as the file type.
      const int64_t bytes = Info(t).block_bytes;
      uint8_t file[sizeof(BlockQ6_K)];
      for (int64_t i = 0; i < n; ++i) {
        FromLaneOrder(t, src + i * bytes, 1, file);
        DequantizeBlocks(FileTypeOf(t), file, 1, out + i * kQK_K);
      }
      return;
    }
  }
}

}  // namespace lineage::quant
