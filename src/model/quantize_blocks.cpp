#include "model/quantize_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/lane_order.h"
#include "core/quant_blocks.h"

namespace lineage::model {
namespace {

using namespace quant;

int Nearest(float x) { return static_cast<int>(std::nearbyint(x)); }
int Clamp(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }
float Inv(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }
// The fp16 a value is stored as, and its float (the codes use the stored one).
uint16_t Half(float v, float* rounded) {
  const uint16_t h = FloatToHalf(v);
  *rounded = HalfToFloat(h);
  return h;
}

// The value of x with the largest magnitude, sign kept.
float SignedMax(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
  return m;
}

int NearestIQ4(float v) {
  int best = 0;
  for (int k = 1; k < 16; ++k)
    if (std::fabs(kIQ4Values[k] - v) < std::fabs(kIQ4Values[best] - v)) best = k;
  return best;
}

// Legacy blocks: codes q[32] in element order, packed as low nibbles
// (elements 0..15) and high nibbles (16..31); the fifth bits into qh.
void PackNibbles(const int* q, uint8_t qs[16]) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 15) | (q[j + 16] & 15) << 4);
}
void PackFifth(const int* q, uint8_t qh[4]) {
  uint32_t h = 0;
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  std::memcpy(qh, &h, 4);
}

// Q4_0 (4 bits) and Q5_0 (5 bits): a signed scale that maps the value of
// largest magnitude to the lowest code, q = round(x / d) + 2^(bits-1).
template <typename Block, int kBits>
void SymmetricLegacy(const float* x, uint8_t* out) {
  constexpr int kHalf = 1 << (kBits - 1);
  Block b{};
  float d;
  b.d = Half(SignedMax(x, 32) / -static_cast<float>(kHalf), &d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = Clamp(Nearest(x[j] * Inv(d)) + kHalf, 0, 2 * kHalf - 1);
  PackNibbles(q, b.qs);
  if constexpr (kBits == 5) PackFifth(q, b.qh);
  std::memcpy(out, &b, sizeof b);
}

void Q5_1(const float* x, uint8_t* out) {
  BlockQ5_1 b{};
  const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  float d, m;
  b.d = Half((hi - lo) / 31.0f, &d);
  b.m = Half(lo, &m);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = Clamp(Nearest((x[j] - m) * Inv(d)), 0, 31);
  PackNibbles(q, b.qs);
  PackFifth(q, b.qh);
  std::memcpy(out, &b, sizeof b);
}

void IQ4_NL(const float* x, uint8_t* out) {
  BlockIQ4_NL b{};
  float d;
  b.d = Half(SignedMax(x, 32) / kIQ4Values[0], &d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = NearestIQ4(x[j] * Inv(d));
  PackNibbles(q, b.qs);
  std::memcpy(out, &b, sizeof b);
}

// MXFP4: the smallest power-of-two scale that keeps the block's largest
// magnitude within the table (6 in E2M1, so nothing is clipped), then each
// value to its nearest code.
void MXFP4(const float* x, uint8_t* out) {
  BlockMXFP4 b{};
  const float amax = std::fabs(SignedMax(x, 32));
  int e = 0;
  if (amax > 0) e = std::clamp(static_cast<int>(std::ceil(std::log2(amax / 12.0f))) + 128, 0, 254);
  while (e < 254 && amax > 12.0f * E8M0Half(static_cast<uint8_t>(e))) ++e;  // log2's rounding
  b.e = static_cast<uint8_t>(e);
  const float inv = 1.0f / E8M0Half(b.e);
  int q[32];
  for (int j = 0; j < 32; ++j) {
    int best = 0;
    for (int k = 1; k < 16; ++k)
      if (std::fabs(kMXFP4Values[k] - x[j] * inv) < std::fabs(kMXFP4Values[best] - x[j] * inv)) best = k;
    q[j] = best;
  }
  PackNibbles(q, b.qs);
  std::memcpy(out, &b, sizeof b);
}

// Q4_K / Q5_K: eight sub-blocks of 32 with an unsigned scale and min each
// (x ~ scale * q - min, q in [0, levels]), quantized to 6 bits against
// the super-block's d and dmin.
template <typename Block>
void K4(const float* x, int levels, uint8_t* out) {
  Block b{};
  float scale[8], minv[8];
  for (int s = 0; s < 8; ++s) {
    const float lo = std::min(0.0f, *std::min_element(x + 32 * s, x + 32 * s + 32));
    const float hi = *std::max_element(x + 32 * s, x + 32 * s + 32);
    scale[s] = (hi - lo) / static_cast<float>(levels);
    minv[s] = -lo;
  }
  float d, dmin;
  b.d = Half(*std::max_element(scale, scale + 8) / 63.0f, &d);
  b.dmin = Half(*std::max_element(minv, minv + 8) / 63.0f, &dmin);
  int q[256];
  for (int s = 0; s < 8; ++s) {
    const int sc = Clamp(Nearest(scale[s] * Inv(d)), 0, 63), m = Clamp(Nearest(minv[s] * Inv(dmin)), 0, 63);
    if (s < 4) {
      b.scales[s] = static_cast<uint8_t>(sc);
      b.scales[s + 4] = static_cast<uint8_t>(m);
    } else {
      b.scales[s + 4] = static_cast<uint8_t>((sc & 15) | (m & 15) << 4);
      b.scales[s - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
      b.scales[s] |= static_cast<uint8_t>((m >> 4) << 6);
    }
    const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) q[32 * s + l] = Clamp(Nearest((x[32 * s + l] + ml) * Inv(dl)), 0, levels);
  }
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      b.qs[32 * p + l] = static_cast<uint8_t>((q[64 * p + l] & 15) | (q[64 * p + 32 + l] & 15) << 4);
      if constexpr (std::is_same_v<Block, BlockQ5_K>) {
        b.qh[l] |= static_cast<uint8_t>(((q[64 * p + l] >> 4) & 1) << (2 * p));
        b.qh[l] |= static_cast<uint8_t>(((q[64 * p + 32 + l] >> 4) & 1) << (2 * p + 1));
      }
    }
  std::memcpy(out, &b, sizeof b);
}

void Q6_K(const float* x, uint8_t* out) {
  BlockQ6_K b{};
  float scale[16], largest = 0;
  for (int s = 0; s < 16; ++s) {
    scale[s] = SignedMax(x + 16 * s, 16) / -32.0f;
    if (std::fabs(scale[s]) > std::fabs(largest)) largest = scale[s];
  }
  float d;
  b.d = Half(largest / -128.0f, &d);
  int q[256];
  for (int s = 0; s < 16; ++s) {
    const int sc = Clamp(Nearest(scale[s] * Inv(d)), -128, 127);
    b.scales[s] = static_cast<int8_t>(sc);
    const float dl = d * static_cast<float>(sc);
    for (int l = 0; l < 16; ++l) q[16 * s + l] = Clamp(Nearest(x[16 * s + l] * Inv(dl)), -32, 31) + 32;
  }
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int* e = q + 128 * h + l;  // elements l, l + 32, l + 64, l + 96 of this half
      b.ql[64 * h + l] = static_cast<uint8_t>((e[0] & 15) | (e[64] & 15) << 4);
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((e[32] & 15) | (e[96] & 15) << 4);
      b.qh[32 * h + l] = static_cast<uint8_t>((e[0] >> 4) | (e[32] >> 4) << 2 | (e[64] >> 4) << 4 | (e[96] >> 4) << 6);
    }
  std::memcpy(out, &b, sizeof b);
}

void IQ4_XS(const float* x, uint8_t* out) {
  BlockIQ4_XS b{};
  float scale[8], largest = 0;
  for (int s = 0; s < 8; ++s) {
    scale[s] = SignedMax(x + 32 * s, 32) / kIQ4Values[0];
    if (std::fabs(scale[s]) > std::fabs(largest)) largest = scale[s];
  }
  float d;
  b.d = Half(largest / -32.0f, &d);
  for (int s = 0; s < 8; ++s) {
    const int ls = Clamp(Nearest(scale[s] * Inv(d)), -32, 31);
    const int v = ls + 32;
    b.scales_l[s / 2] |= static_cast<uint8_t>((v & 15) << (4 * (s % 2)));
    b.scales_h |= static_cast<uint16_t>((v >> 4) << (2 * s));
    const float dl = d * static_cast<float>(ls);
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = NearestIQ4(x[32 * s + j] * Inv(dl));
    PackNibbles(q, b.qs + 16 * s);
  }
  std::memcpy(out, &b, sizeof b);
}

}  // namespace

bool CanQuantize(DType t) {
  switch (t) {
    case DType::kQ4_0: case DType::kQ5_0: case DType::kQ5_1: case DType::kIQ4_NL:
    case DType::kQ4_K: case DType::kQ5_K: case DType::kQ6_K: case DType::kIQ4_XS: case DType::kMXFP4:
      return true;
    default:
      return false;
  }
}

void QuantizeRow(DType t, const float* x, int64_t n, uint8_t* out) {
  if (quant::IsLaneOrder(t)) {
    const DType file = quant::FileTypeOf(t);
    QuantizeRow(file, x, n, out);
    quant::ToLaneOrder(file, out, n / Info(file).block_elements, out);
    return;
  }
  const int64_t be = Info(t).block_elements, bb = Info(t).block_bytes;
  for (int64_t b = 0; b < n / be; ++b) {
    const float* xb = x + b * be;
    uint8_t* ob = out + b * bb;
    switch (t) {
      case DType::kQ4_0: SymmetricLegacy<BlockQ4_0, 4>(xb, ob); break;
      case DType::kQ5_0: SymmetricLegacy<BlockQ5_0, 5>(xb, ob); break;
      case DType::kQ5_1: Q5_1(xb, ob); break;
      case DType::kIQ4_NL: IQ4_NL(xb, ob); break;
      case DType::kQ4_K: K4<BlockQ4_K>(xb, 15, ob); break;
      case DType::kQ5_K: K4<BlockQ5_K>(xb, 31, ob); break;
      case DType::kQ6_K: Q6_K(xb, ob); break;
      case DType::kIQ4_XS: IQ4_XS(xb, ob); break;
      case DType::kMXFP4: MXFP4(xb, ob); break;
      default: return;
    }
  }
}

}  // namespace lineage::model
