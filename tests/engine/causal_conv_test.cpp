// CausalConv (engine/recurrent_ops.h): decode takes one row at a time
// through its own path (taps read in place; 8 channels at a time when K = 4),
// prefill the tap-major rows. Both must give the same values bit for bit, and
// leave the same window, or a sequence would drift from its own prefill.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/recurrent_ops.h"

namespace lineage::engine {
namespace {

TEST(CausalConv, RowByRowEqualsOneRun) {
  for (int64_t K : {4, 3}) {
    const int64_t conv_dim = 29, T = 5, c0 = 2, c1 = 27;  // 8-channel groups and a tail
    std::mt19937 rng(static_cast<uint32_t>(K));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> weight(conv_dim * K), window0((K - 1) * conv_dim), in(T * conv_dim);
    for (float& v : weight) v = nd(rng);
    for (float& v : window0) v = nd(rng);
    for (float& v : in) v = nd(rng);

    std::vector<float> window_run = window0, y_run(T * conv_dim, 0.0f);
    CausalConv(weight.data(), K, conv_dim, c0, c1, window_run.data(), in.data(), conv_dim, T, y_run.data());
    std::vector<float> window_rows = window0, y_rows(T * conv_dim, 0.0f);
    for (int64_t t = 0; t < T; ++t)
      CausalConv(weight.data(), K, conv_dim, c0, c1, window_rows.data(), in.data() + t * conv_dim, conv_dim, 1,
                 y_rows.data() + t * conv_dim);
    SCOPED_TRACE(::testing::Message() << "K=" << K);
    for (int64_t i = 0; i < T * conv_dim; ++i) ASSERT_EQ(y_rows[i], y_run[i]) << "row " << i / conv_dim;
    for (int64_t i = 0; i < (K - 1) * conv_dim; ++i) ASSERT_EQ(window_rows[i], window_run[i]) << i;
    // Channels outside [c0, c1) are neither written nor slid.
    for (int64_t j = 0; j < K - 1; ++j) {
      EXPECT_EQ(window_rows[j * conv_dim], window0[j * conv_dim]);
      EXPECT_EQ(window_rows[j * conv_dim + conv_dim - 1], window0[j * conv_dim + conv_dim - 1]);
    }
  }
}

}  // namespace
}  // namespace lineage::engine
