#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/status.h"

namespace lineage {
namespace {

TEST(DType, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;  // inf / nan
    float f = HalfToFloat(static_cast<uint16_t>(h));
    EXPECT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
}

TEST(DType, HalfKnownValues) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds to inf
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  float just_above;  // 1 + 2^-8 is exactly half way between two bf16 values: ties to even (1.0)
  uint32_t bits = 0x3f808000u;
  std::memcpy(&just_above, &bits, 4);
  EXPECT_EQ(FloatToBf16(just_above), 0x3f80);
  bits = 0x3f818000u;  // half way, odd lower neighbour: rounds up
  std::memcpy(&just_above, &bits, 4);
  EXPECT_EQ(FloatToBf16(just_above), 0x3f82);
  EXPECT_EQ(Bf16ToFloat(0x4040), 3.0f);
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(RowBytes(DType::kQ8_0, 64), 68);
  EXPECT_EQ(RowBytes(DType::kBF16, 10), 20);
  EXPECT_EQ(ParseDType("q8_0"), DType::kQ8_0);
  EXPECT_FALSE(ParseDType("q3_x").has_value());
}

TEST(Status, CarriesContext) {
  Status s = Corrupt("tensor blk.0.attn_q: 12 bytes short").With("model.gguf");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.message(), "model.gguf: tensor blk.0.attn_q: 12 bytes short");
  Result<int> r = NotFound("x");
  EXPECT_FALSE(r.ok());
  Result<int> v = 3;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
}

}  // namespace
}  // namespace lineage
