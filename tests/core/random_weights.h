// Test helpers: random activations and random weight tensors in every dtype
// the kernels accept, owned by the returned object.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/quant_blocks.h"
#include "core/tensor_view.h"

namespace lineage::testing {

// Every dtype, and every block-quantized one, in enum order: the kernel
// tests run over these so that a new type is covered where it is added.
inline std::vector<DType> AllDTypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}
inline std::vector<DType> QuantizedDTypes() {
  std::vector<DType> out;
  for (DType t : AllDTypes())
    if (IsQuantized(t)) out.push_back(t);
  return out;
}

struct OwnedTensor {
  std::vector<uint8_t> bytes;
  TensorView view;
};

// A [rows, cols] tensor of `dtype` with values spread over about [-1, 1].
// Q8_0 blocks get a random fp16 scale and random int8 values in [-127, 127];
// the other block types random bytes with ordinary fp16 (or E8M0) scales and mins.
inline OwnedTensor RandomWeights(DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  OwnedTensor t;
  t.bytes.resize(static_cast<size_t>(RowBytes(dtype, cols) * rows));
  uint8_t* p = t.bytes.data();
  const int64_t n = rows * cols;
  switch (dtype) {
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) {
        float f = uni(rng);
        std::memcpy(p + 4 * i, &f, 4);
      }
      break;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = dtype == DType::kF16 ? FloatToHalf(uni(rng)) : FloatToBf16(uni(rng));
        std::memcpy(p + 2 * i, &h, 2);
      }
      break;
    case DType::kQ8_0: {
      std::uniform_int_distribution<int> q(-127, 127);
      for (int64_t b = 0; b < n / 32; ++b) {
        uint16_t d = FloatToHalf((0.5f + 0.5f * std::fabs(uni(rng))) / 127.0f);
        std::memcpy(p + 34 * b, &d, 2);
        for (int i = 0; i < 32; ++i) p[34 * b + 2 + i] = static_cast<uint8_t>(static_cast<int8_t>(q(rng)));
      }
      break;
    }
    default: {  // the other block types: random codes and scale bytes, sane fp16 fields
      std::uniform_int_distribution<int> byte(0, 255);
      for (auto& b : t.bytes) b = static_cast<uint8_t>(byte(rng));
      const DTypeInfo& info = Info(dtype);
      const int64_t range = info.block_elements == 32 ? 16 : 16 * 32;  // codes x sub-block scales
      for (int64_t b = 0; b < n / info.block_elements; ++b) {
        for (const quant::HalfField& f : quant::HalfFields(dtype)) {
          const float v = f.is_min ? 0.05f * uni(rng) : (0.5f + 0.5f * std::fabs(uni(rng))) / static_cast<float>(range);
          const uint16_t h = FloatToHalf(v);
          std::memcpy(p + b * info.block_bytes + f.offset, &h, 2);
        }
        // An E8M0 scale of 2^-8 .. 2^-5 against codes up to 12.
        if (const int e = quant::E8M0Field(dtype); e >= 0) p[b * info.block_bytes + e] = static_cast<uint8_t>(120 + byte(rng) % 4);
      }
      break;
    }
  }
  t.view = TensorView{"random", dtype, {rows, cols}, t.bytes.data(), static_cast<int64_t>(t.bytes.size())};
  return t;
}

// Normal(0, scale) values, with a few larger outliers as real activations have.
inline std::vector<float> RandomActivations(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = nd(rng) * (i % 97 == 0 ? 8.0f : 1.0f);
  return x;
}

}  // namespace lineage::testing
