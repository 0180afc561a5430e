// The simulator's model shapes and byte-size parsing.
#include <gtest/gtest.h>

#include "sim/shapes.h"

namespace lineage::sim {
namespace {

TEST(Shapes, ParseBytes) {
  EXPECT_EQ(*ParseBytes("48G"), int64_t{48} << 30);
  EXPECT_EQ(*ParseBytes("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseBytes("1T"), int64_t{1} << 40);
  EXPECT_EQ(*ParseBytes("1.5K"), 1536);
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("2GiB"), int64_t{2} << 30);
  EXPECT_FALSE(ParseBytes("").ok());
  EXPECT_FALSE(ParseBytes("G").ok());
  EXPECT_FALSE(ParseBytes("12X").ok());
  EXPECT_FALSE(ParseBytes("-1G").ok());
}

TEST(Shapes, SpecNumbers) {
  // Spec §8 in fp32: Qwen3.5-0.8B 19.27 MiB, Qwen3-Next 75.38 MiB; §11: 112 KiB/token.
  EXPECT_NEAR(FindShape("qwen3.5-0.8b")->recurrent_bytes / 1048576.0, 19.27, 0.01);
  EXPECT_NEAR(FindShape("qwen3-next-80b")->recurrent_bytes / 1048576.0, 75.38, 0.01);
  EXPECT_EQ(FindShape("kimi-linear-48b-a3b")->kv_bytes_per_token, 8064);  // spec §8
  EXPECT_NEAR(FindShape("kimi-linear-48b-a3b")->recurrent_bytes / 1048576.0, 42.81, 0.01);
  EXPECT_EQ(FindShape("qwen3-0.6b")->kv_bytes_per_token, 112 * 1024);
  EXPECT_TRUE(FindShape("qwen3-0.6b")->attention_only());
  EXPECT_FALSE(FindShape("nope").ok());
}

}  // namespace
}  // namespace lineage::sim
