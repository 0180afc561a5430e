// Element types of stored weights and their block layouts.
//
// Quantized types are stored in blocks along a row (the input dimension):
// a row of n elements of Q8_0 is n/32 blocks of {fp16 scale, 32 x int8}.
// Q4_K and Q6_K are reserved for a later loader (GGML's 256-element
// super-blocks); the enum and the size table already account for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lineage {

enum class DType : uint8_t { kF32, kF16, kBF16, kQ8_0, kQ4_K, kQ6_K };

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

std::optional<DType> ParseDType(std::string_view name);  // "f32", "bf16", "q8_0", ...

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
