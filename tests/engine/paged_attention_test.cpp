// The tiled attention kernel (AttendGroup over kernels::AttentionTile)
// against a plain attention in double precision written out here: random
// shapes, start positions past zero, row counts that are not a multiple of
// any tile, a partly filled last page, f32 and bf16 pages, sharp and flat
// softmaxes, on every ISA the CPU has; and the same rows as the layer runs
// them (AttendRuns), split by keys where a run is short and its context long.
#include "engine/paged_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/attention_tile.h"
#include "core/isa.h"

namespace lineage::engine {
namespace {

struct Shape {
  int64_t num_kv_heads, group, head_dim, page_tokens, start_pos, rows;
  DType dtype;
  float q_scale;  // spread of the scores: large means a sharp softmax
};

std::vector<kernels::Isa> Isas() {
  std::vector<kernels::Isa> out{kernels::Isa::kAvx2};
  if (kernels::DetectedIsa() == kernels::Isa::kAvx512) out.push_back(kernels::Isa::kAvx512);
  return out;
}

// Fills a one-layer page table with start_pos + rows random K and V rows and
// returns the stored values (after the page type's rounding) as
// [head][pos][d].
void Fill(cache::PageTable& table, int64_t num_tokens, std::mt19937& rng, std::vector<float>* k_out,
          std::vector<float>* v_out) {
  const cache::KvLayout& l = table.layout();
  std::normal_distribution<float> nd(0.0f, 1.0f);
  table.Reserve(num_tokens);
  std::vector<float> k(l.head_dim), v(l.head_dim);
  for (int64_t pos = 0; pos < num_tokens; ++pos) {
    for (int64_t h = 0; h < l.num_kv_heads; ++h) {
      for (int64_t d = 0; d < l.head_dim; ++d) {
        k[d] = nd(rng);
        v[d] = nd(rng);
      }
      table.WriteRow(0, h, pos, k.data(), v.data());
    }
  }
  table.Commit(num_tokens);
  k_out->assign(static_cast<size_t>(l.num_kv_heads * num_tokens * l.head_dim), 0.0f);
  v_out->assign(k_out->size(), 0.0f);
  std::vector<float> page_rows(static_cast<size_t>(l.page_tokens * l.head_dim));
  for (int64_t h = 0; h < l.num_kv_heads; ++h) {
    for (int64_t p = 0; p * l.page_tokens < num_tokens; ++p) {
      const int64_t n = std::min(l.page_tokens, num_tokens - p * l.page_tokens);
      for (bool values : {false, true}) {
        table.page(p).ReadRows(0, h, values, n, page_rows.data());
        float* dst = (values ? v_out : k_out)->data() + (h * num_tokens + p * l.page_tokens) * l.head_dim;
        std::copy(page_rows.begin(), page_rows.begin() + n * l.head_dim, dst);
      }
    }
  }
}

void CheckShape(const Shape& s, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "kv_heads " << s.num_kv_heads << " group " << s.group << " head_dim "
                                  << s.head_dim << " page " << s.page_tokens << " start " << s.start_pos << " rows "
                                  << s.rows << " " << Info(s.dtype).name << " q_scale " << s.q_scale);
  std::mt19937 rng(seed);
  cache::KvLayout layout{.num_layers = 1, .num_kv_heads = s.num_kv_heads, .head_dim = s.head_dim,
                         .page_tokens = s.page_tokens, .dtype = s.dtype};
  cache::PageTable table(layout);
  const int64_t num_tokens = s.start_pos + s.rows, hd = s.head_dim;
  std::vector<float> keys, values;
  Fill(table, num_tokens, rng, &keys, &values);
  const int64_t num_heads = s.num_kv_heads * s.group, q_dim = num_heads * hd;
  std::normal_distribution<float> nd(0.0f, s.q_scale);
  std::vector<float> q(static_cast<size_t>(s.rows * q_dim));
  for (float& x : q) x = nd(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  // Plain attention in double: row t, head h sees keys [0, start_pos + t].
  std::vector<double> want(q.size());
  for (int64_t t = 0; t < s.rows; ++t) {
    for (int64_t h = 0; h < num_heads; ++h) {
      const int64_t kvh = h / s.group, n = s.start_pos + t + 1;
      const float* qv = q.data() + t * q_dim + h * hd;
      std::vector<double> w(static_cast<size_t>(n));
      double mx = -1e300, total = 0;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < hd; ++d) dot += double(qv[d]) * keys[(kvh * num_tokens + j) * hd + d];
        w[j] = dot * scale;
        mx = std::max(mx, w[j]);
      }
      for (double& x : w) total += (x = std::exp(x - mx));
      for (int64_t d = 0; d < hd; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < n; ++j) acc += w[j] * values[(kvh * num_tokens + j) * hd + d];
        want[t * q_dim + h * hd + d] = acc / total;
      }
    }
  }

  for (kernels::Isa isa : Isas()) {
    SCOPED_TRACE(kernels::IsaName(isa));
    ASSERT_TRUE(kernels::ForceIsa(isa));
    std::vector<float> got(q.size(), NAN);
    const AttentionRun run{&table, 0, s.start_pos, num_heads, scale};
    // Two row blocks (the second may be empty) as the layer splits them.
    const int64_t cut = s.rows / 3;
    for (int64_t kvh = 0; kvh < s.num_kv_heads; ++kvh) {
      if (cut > 0) AttendGroup(run, kvh, 0, cut, q.data(), q_dim, got.data(), q_dim);
      AttendGroup(run, kvh, cut, s.rows, q.data(), q_dim, got.data(), q_dim);
    }
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << "at " << i;
      worst = std::max(worst, std::abs(got[i] - want[i]));
    }
    EXPECT_LT(worst, 2e-5) << "largest difference from the double-precision attention";

    // The rows as the layer runs them (AttendRuns): a short run over a long
    // context split by keys into parts attended on their own, then merged.
    std::vector<float> runs_out(q.size(), NAN);
    const AttentionRows rows{run, q.data(), runs_out.data(), s.rows};
    AttendRuns(std::span(&rows, 1), nullptr);
    double worst_runs = 0;
    for (size_t i = 0; i < runs_out.size(); ++i) {
      ASSERT_TRUE(std::isfinite(runs_out[i])) << "AttendRuns, at " << i;
      worst_runs = std::max(worst_runs, std::abs(runs_out[i] - want[i]));
    }
    EXPECT_LT(worst_runs, 2e-5) << "AttendRuns (split in " << KeyPartsOf(run, s.start_pos, s.rows).parts
                                << " parts at its first row): largest difference from the double-precision attention";
  }
  kernels::ResetIsa();
}

TEST(PagedAttention, MatchesPlainAttentionOnRandomShapes) {
  std::mt19937 rng(12345);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  for (int c = 0; c < 24; ++c) {
    Shape s;
    s.num_kv_heads = pick({1, 2});
    s.group = pick({1, 2, 3, 4});
    s.head_dim = pick({16, 32, 48, 64, 128, 256});
    s.page_tokens = pick({16, 64});
    s.start_pos = c % 4 == 0 ? 0 : std::uniform_int_distribution<int64_t>(1, 300)(rng);
    s.rows = std::uniform_int_distribution<int64_t>(1, 90)(rng);
    s.dtype = c % 2 == 0 ? DType::kF32 : DType::kBF16;
    s.q_scale = c % 3 == 0 ? 4.0f : 1.0f;
    CheckShape(s, 1000 + c);
  }
}

TEST(PagedAttention, DecodeRowAndModelShapes) {
  // One query row (decode) and a prefill run at the 0.8B attention shape,
  // with the last page partly filled.
  for (DType dt : {DType::kF32, DType::kBF16}) {
    CheckShape({2, 4, 256, 64, 700, 1, dt, 1.0f}, 7);
    CheckShape({2, 4, 256, 64, 130, 45, dt, 2.0f}, 8);
    CheckShape({1, 8, 128, 64, 0, 67, dt, 1.0f}, 9);
  }
}

TEST(PagedAttention, DecodeRowSplitByKeysMatchesPlainAttention) {
  // Positions at and around the part boundaries: the last part of one key,
  // of a whole part, and of a partly filled page; pages of 16 and 64 tokens.
  constexpr int64_t P = kDecodePartKeys;
  uint32_t seed = 20;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (int64_t pos : {P - 1, P, 2 * P - 1, 2 * P + 37, 3 * P}) {
      CheckShape({2, 4, 64, 64, pos, 1, dt, 2.0f}, seed++);
    }
    CheckShape({1, 3, 128, 16, 2 * P + 500, 1, dt, 4.0f}, seed++);
  }
  // Below two parts' worth a row is not split; from there on it is.
  cache::PageTable table({.num_layers = 1, .num_kv_heads = 1, .head_dim = 64, .page_tokens = 64});
  const AttentionRun run{&table, 0, 0, 1, 1.0f};
  EXPECT_EQ(KeyPartsOf(run, P - 2, 1).parts, 1);
  EXPECT_EQ(KeyPartsOf(run, P - 1, 1).parts, 1);
  EXPECT_EQ(KeyPartsOf(run, P, 1).parts, 2);
  EXPECT_EQ(KeyPartsOf(run, 3 * P - 1, 1).parts, 3);
  EXPECT_EQ(KeyPartsOf(run, 3 * P, 1).parts, 4);
  EXPECT_EQ(KeyPartsOf(run, 100 * P, 1).part_keys, P) << "a decode row's parts are never widened";
}

TEST(PagedAttention, ShortRunSplitByKeysMatchesPlainAttention) {
  // A warm turn's few rows over a long context: runs that start on, before
  // and after a part boundary, one that crosses it (cut there into two
  // blocks of their own parts), runs of 2 rows (few queries per tile) and
  // of 64 (the most a split run has).
  constexpr int64_t P = kDecodePartKeys;
  uint32_t seed = 40;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    CheckShape({2, 4, 64, 64, P, 2, dt, 2.0f}, seed++);
    CheckShape({2, 4, 64, 64, 2 * P - 20, 50, dt, 2.0f}, seed++);
    CheckShape({1, 2, 128, 16, 2 * P + 3, 64, dt, 4.0f}, seed++);
    CheckShape({2, 3, 64, 64, 3 * P - 1, 7, dt, 1.0f}, seed++);
  }
  // Several rows take wider parts once they would have more than
  // kMaxBlockParts whole ones before their own; never a run of one.
  cache::PageTable table({.num_layers = 1, .num_kv_heads = 1, .head_dim = 64, .page_tokens = 64});
  const AttentionRun run{&table, 0, 0, 1, 1.0f};
  EXPECT_EQ(KeyPartsOf(run, P - 1, 40).parts, 1);
  EXPECT_EQ(KeyPartsOf(run, P, 40).parts, 2);
  EXPECT_EQ(KeyPartsOf(run, kMaxBlockParts * P + 5, 40).part_keys, P);
  EXPECT_EQ(KeyPartsOf(run, (kMaxBlockParts + 1) * P, 40).part_keys, 2 * P);
  for (int64_t pos : {3 * P, 40 * P + 7, 500 * P}) {
    const KeyParts kp = KeyPartsOf(run, pos, 64);
    EXPECT_LE(kp.parts, kMaxBlockParts + 1) << pos;
    EXPECT_EQ(kp.part_keys % P, 0) << pos;
    EXPECT_EQ(kp.parts, pos / kp.part_keys + 1) << pos;
  }
}

TEST(PagedAttention, HeadSizeNotAMultipleOf16TakesTheRowPath) {
  CheckShape({2, 2, 8, 16, 20, 13, DType::kF32, 1.0f}, 11);
  CheckShape({1, 3, 40, 16, 5, 9, DType::kBF16, 1.0f}, 12);
}

}  // namespace
}  // namespace lineage::engine
