#include "core/dtype.h"

#include <cmath>
#include <cstring>

namespace lineage {

const DTypeInfo& Info(DType t) {
  // Sizes are pinned against the block structs in core/quant_blocks.h.
  static const DTypeInfo kInfo[kNumDTypes] = {
      {"f32", 1, 4},         {"f16", 1, 2},        {"bf16", 1, 2},
      {"q8_0", 32, 34},      {"q4_k", 256, 144},   {"q6_k", 256, 210},
      {"q4_0", 32, 18},      {"q4_1", 32, 20},     {"q5_0", 32, 22},
      {"q5_1", 32, 24},      {"q2_k", 256, 84},    {"q3_k", 256, 110},
      {"q5_k", 256, 176},    {"iq4_nl", 32, 18},   {"iq4_xs", 256, 136},
      {"mxfp4", 32, 17},     {"q4_k_lanes", 256, 144}, {"q6_k_lanes", 256, 210},
  };
  return kInfo[static_cast<int>(t)];
}

std::optional<DType> ParseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (Info(static_cast<DType>(i)).name == name) return static_cast<DType>(i);
  return std::nullopt;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { mant <<= 1; ++e; } while ((mant & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    float a;
    std::memcpy(&a, &abs, 4);
    // Scale so the half subnormal unit becomes 1, round to nearest even.
    uint32_t m = static_cast<uint32_t>(std::nearbyint(a * 16777216.0f));  // 2^24
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t e = ((abs >> 23) - 127 + 15) << 10;
  uint32_t m = (abs >> 13) & 0x3ff;
  uint32_t rest = abs & 0x1fff;
  uint32_t h = e | m;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace lineage
