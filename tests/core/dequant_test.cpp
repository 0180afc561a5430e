// Block dequantization: the scalar reference on hand-built blocks of the
// types the llama.cpp oracle files do not contain (tests/model holds the
// oracle test for the others), and the fast decoders of both ISAs against the
// reference on random blocks, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/dequant.h"
#include "core/gemm_internal.h"
#include "core/isa.h"
#include "core/quant_blocks.h"
#include "random_weights.h"

namespace lineage::quant {
namespace {

std::vector<float> Decode(DType t, const void* block) {
  std::vector<float> y(static_cast<size_t>(Info(t).block_elements));
  DequantizeBlocks(t, static_cast<const uint8_t*>(block), 1, y.data());
  return y;
}

TEST(Dequant, BlockSizesMatchTheDtypeTable) {
  EXPECT_EQ(Info(DType::kQ4_0).block_bytes, static_cast<int64_t>(sizeof(BlockQ4_0)));
  EXPECT_EQ(Info(DType::kQ4_1).block_bytes, static_cast<int64_t>(sizeof(BlockQ4_1)));
  EXPECT_EQ(Info(DType::kQ5_0).block_bytes, static_cast<int64_t>(sizeof(BlockQ5_0)));
  EXPECT_EQ(Info(DType::kQ5_1).block_bytes, static_cast<int64_t>(sizeof(BlockQ5_1)));
  EXPECT_EQ(Info(DType::kQ8_0).block_bytes, static_cast<int64_t>(sizeof(BlockQ8_0)));
  EXPECT_EQ(Info(DType::kIQ4_NL).block_bytes, static_cast<int64_t>(sizeof(BlockIQ4_NL)));
  EXPECT_EQ(Info(DType::kQ2_K).block_bytes, static_cast<int64_t>(sizeof(BlockQ2_K)));
  EXPECT_EQ(Info(DType::kQ3_K).block_bytes, static_cast<int64_t>(sizeof(BlockQ3_K)));
  EXPECT_EQ(Info(DType::kQ4_K).block_bytes, static_cast<int64_t>(sizeof(BlockQ4_K)));
  EXPECT_EQ(Info(DType::kQ5_K).block_bytes, static_cast<int64_t>(sizeof(BlockQ5_K)));
  EXPECT_EQ(Info(DType::kQ6_K).block_bytes, static_cast<int64_t>(sizeof(BlockQ6_K)));
  EXPECT_EQ(Info(DType::kIQ4_XS).block_bytes, static_cast<int64_t>(sizeof(BlockIQ4_XS)));
  EXPECT_EQ(Info(DType::kMXFP4).block_bytes, static_cast<int64_t>(sizeof(BlockMXFP4)));
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    EXPECT_EQ(ParseDType(Info(t).name), t) << Info(t).name;
  }
}

TEST(Dequant, LegacyBlocksFollowTheDocumentedFormulas) {
  const float d = 0.5f, m = -1.25f;
  BlockQ4_1 q41{FloatToHalf(d), FloatToHalf(m), {}};
  BlockQ5_0 q50{FloatToHalf(d), {}, {}};
  BlockQ5_1 q51{FloatToHalf(d), FloatToHalf(m), {}, {}};
  BlockIQ4_NL nl{FloatToHalf(d), {}};
  const uint32_t qh = 0x80000001u | 1u << 20;  // fifth bits of elements 0, 20 and 31
  std::memcpy(q50.qh, &qh, 4);
  std::memcpy(q51.qh, &qh, 4);
  for (int j = 0; j < 16; ++j) {
    const uint8_t byte = static_cast<uint8_t>(j | (15 - j) << 4);
    q41.qs[j] = q50.qs[j] = q51.qs[j] = nl.qs[j] = byte;
  }
  const auto y41 = Decode(DType::kQ4_1, &q41), y50 = Decode(DType::kQ5_0, &q50);
  const auto y51 = Decode(DType::kQ5_1, &q51), ynl = Decode(DType::kIQ4_NL, &nl);
  for (int i = 0; i < 32; ++i) {
    const int code = i < 16 ? i : 15 - (i - 16);  // low nibbles first, then high nibbles
    const int fifth = (qh >> i) & 1 ? 16 : 0;
    EXPECT_EQ(y41[i], code * d + m) << i;
    EXPECT_EQ(y50[i], ((code | fifth) - 16) * d) << i;
    EXPECT_EQ(y51[i], (code | fifth) * d + m) << i;
    EXPECT_EQ(ynl[i], d * kIQ4Values[code]) << i;
  }
}

// MXFP4 (docs/model-files.md): the E2M1 values {0, 0.5, 1, 1.5, 2, 3, 4, 6}
// and their negatives times 2^(e - 127), the E8M0 exponent, down to the
// subnormal scales of e = 0 and 1 and up to e = 254.
TEST(Dequant, Mxfp4IsE2M1TimesAnE8M0Exponent) {
  const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int e : {0, 1, 2, 100, 127, 130, 254}) {
    BlockMXFP4 b{static_cast<uint8_t>(e), {}};
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    const auto y = Decode(DType::kMXFP4, &b);
    for (int i = 0; i < 32; ++i) {
      const int code = i < 16 ? i : 15 - (i - 16);
      EXPECT_EQ(y[i], e2m1[code] * std::ldexp(1.0f, e - 127)) << "e " << e << " element " << i;
    }
  }
}

// The fast decoders of both ISAs equal the reference bit for bit.
TEST(Dequant, FastDecodersMatchReferenceBitForBit) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    if (!IsQuantized(t)) continue;
    const int64_t cols = 4 * Info(t).block_elements, rows = 16;
    auto w = testing::RandomWeights(t, rows, cols, 41 + static_cast<uint32_t>(i));
    const int64_t blocks = rows * cols / Info(t).block_elements;
    std::vector<float> want(static_cast<size_t>(rows * cols)), got(want.size());
    DequantizeBlocks(t, w.bytes.data(), blocks, want.data());
    for (kernels::Isa isa : {kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
      if (isa == kernels::Isa::kAvx512 && kernels::DetectedIsa() != kernels::Isa::kAvx512) continue;
      std::fill(got.begin(), got.end(), 123.0f);
      if (isa == kernels::Isa::kAvx512) {
        kernels::avx512::DecodeBlocks(t, w.bytes.data(), blocks, got.data());
      } else {
        kernels::avx2::DecodeBlocks(t, w.bytes.data(), blocks, got.data());
      }
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
          << Info(t).name << " " << kernels::IsaName(isa);
    }
  }
}

}  // namespace
}  // namespace lineage::quant
