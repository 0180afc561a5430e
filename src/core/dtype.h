// Element types of stored weights and their block layouts.
//
// Quantized types are GGML's block formats, stored in blocks along a row (the
// input dimension): a row of n elements of Q8_0 is n/32 blocks of {fp16
// scale, 32 x int8}; the K-quants and IQ4_XS use 256-element super-blocks,
// MXFP4 17-byte blocks of 32 (so its rows need not start 2-byte aligned).
// Every layout is written down in docs/model-files.md ("Block types") and
// pinned in core/quant_blocks.h; core/dequant.h decodes them.
// The enum's values are stable (new types are appended): they are stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lineage {

enum class DType : uint8_t {
  kF32, kF16, kBF16, kQ8_0, kQ4_K, kQ6_K,
  kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ2_K, kQ3_K, kQ5_K, kIQ4_NL, kIQ4_XS,
  kMXFP4,
  // Q4_K and Q6_K with their codes in lane order (core/lane_order.h): made
  // at load for the AVX-512 row kernels, never stored in a model file.
  kQ4_K_LANES, kQ6_K_LANES,
};
inline constexpr int kNumDTypes = 18;

// True for the block-quantized types (everything but F32, F16, BF16).
inline bool IsQuantized(DType t) { return t != DType::kF32 && t != DType::kF16 && t != DType::kBF16; }

struct DTypeInfo {
  std::string_view name;     // "f32", "bf16", "q8_0", ...
  int64_t block_elements;    // elements per block (1 for plain types)
  int64_t block_bytes;       // bytes per block
};

const DTypeInfo& Info(DType t);

// Bytes taken by a row of `n` elements; n must be a multiple of the block size.
inline int64_t RowBytes(DType t, int64_t n) {
  const DTypeInfo& i = Info(t);
  return n / i.block_elements * i.block_bytes;
}

std::optional<DType> ParseDType(std::string_view name);  // "f32", "bf16", "q8_0", "q4_k", ...

// Scalar conversions, exact per IEEE (round-to-nearest-even for narrowing).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
inline float Bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBf16(float f);

}  // namespace lineage
