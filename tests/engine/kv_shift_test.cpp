// KV shifting (engine/kv_shift.h) against independent references:
//   - layer 0's K and V depend only on the token and its position, so the
//     rows of a chunk shifted into a new sequence must equal the rows a cold
//     prefill of the new prompt writes there;
//   - on any layer, a shifted K row equals the stored row un-rotated and
//     rotated again in double precision by a formula written here (partial
//     rotary dims of qwen3_5 included);
//   - a shift by 0 copies bit for bit; a sequence built by reuse decodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/kv_shift.h"
#include "engine_test_util.h"

namespace lineage::engine {
namespace {

using testing::MakeEngine;
using testing::MaxRelError;
using testing::TinyModel;
using testing::Tokens;

// Rows [0, n) of (layer, head) of a page table, K or V, as fp32 [n, head_dim].
std::vector<float> Rows(const cache::PageTable& t, int64_t layer, int64_t head, bool values, int64_t from, int64_t n) {
  const int64_t hd = t.layout().head_dim, pt = t.layout().page_tokens;
  std::vector<float> page(static_cast<size_t>(pt * hd)), out;
  for (int64_t r = from; r < from + n; ++r) {
    t.page(r / pt).ReadRows(layer, head, values, r % pt + 1, page.data());
    out.insert(out.end(), page.begin() + (r % pt) * hd, page.begin() + (r % pt + 1) * hd);
  }
  return out;
}

Sequence Prefilled(Engine& e, std::span<const int32_t> tokens) {
  Sequence s = e.NewSequence();
  PrefillResult r;
  EXPECT_TRUE(e.Prefill(s, tokens, {}, &r).ok());
  return s;
}

struct ShiftCase {
  DType kv_dtype;
  double tol;
};

class KvShiftLayerZero : public ::testing::TestWithParam<ShiftCase> {};

// Prompt A = prefix | deleted | tail; prompt B = prefix | tail | more. Restore
// B's prefix from A's snapshot, shift A's tail into place, prefill the rest.
TEST_P(KvShiftLayerZero, ShiftedRowsEqualAColdPrefillOfTheNewPrompt) {
  auto engine = MakeEngine(TinyModel(model::Arch::kQwen3), 2, 16, GetParam().kv_dtype);
  const int64_t vocab = engine->config().vocab;
  const std::vector<int32_t> prefix = Tokens(40, vocab, 1), deleted = Tokens(37, vocab, 2), tail = Tokens(100, vocab, 3),
                             more = Tokens(9, vocab, 4);
  std::vector<int32_t> a = prefix, b = prefix;
  a.insert(a.end(), deleted.begin(), deleted.end());
  a.insert(a.end(), tail.begin(), tail.end());
  b.insert(b.end(), tail.begin(), tail.end());
  b.insert(b.end(), more.begin(), more.end());

  Snapshot snap = Prefilled(*engine, a).Snap();
  auto restored = engine->Admit(*snap.kv->Prefix(40), nullptr);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  Sequence seq = std::move(restored).value();
  ASSERT_TRUE(AppendShiftedRows(engine->config(), *snap.kv, 77, 100, seq).ok());
  ASSERT_EQ(seq.num_tokens(), 140);

  Sequence cold = Prefilled(*engine, std::span(b).first(140));
  const int64_t nkv = engine->kv_layout().num_kv_heads;
  for (int64_t h = 0; h < nkv; ++h) {
    for (bool values : {false, true}) {
      // Row by row: each row's error relative to its own scale.
      for (int64_t r = 40; r < 140; ++r) {
        const std::vector<float> got = Rows(seq.kv(), 0, h, values, r, 1), want = Rows(cold.kv(), 0, h, values, r, 1);
        ASSERT_LT(MaxRelError(got, want), GetParam().tol) << "head " << h << (values ? " V" : " K") << " row " << r;
      }
    }
  }
  // Deeper layers attended to the deleted tokens: they differ (the
  // approximation is real), which also shows the comparison above can fail.
  if (engine->kv_layout().num_layers > 1) {
    EXPECT_GT(MaxRelError(Rows(seq.kv(), 1, 0, false, 60, 80), Rows(cold.kv(), 1, 0, false, 60, 80)), 1e-3);
  }

  // The rest of B prefills on top; the logits are finite and it decodes.
  PrefillResult rest;
  ASSERT_TRUE(engine->Prefill(seq, more, {}, &rest).ok());
  for (float x : rest.logits) ASSERT_TRUE(std::isfinite(x));
  std::vector<float> logits;
  int32_t next = 5;
  for (int step = 0; step < 4; ++step) {
    Sequence* one[] = {&seq};
    ASSERT_TRUE(engine->Decode(one, std::span(&next, 1), &logits).ok());
    for (float x : logits) ASSERT_TRUE(std::isfinite(x));
    next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  EXPECT_EQ(seq.num_tokens(), static_cast<int64_t>(b.size()) + 4);
}

// f32 pages: only float rounding of one more rotation. bf16 pages: the
// shifted row is rounded to bf16 a second time (2^-8 relative per element).
INSTANTIATE_TEST_SUITE_P(KvTypes, KvShiftLayerZero,
                         ::testing::Values(ShiftCase{DType::kF32, 1e-5}, ShiftCase{DType::kBF16, 1e-2}));

TEST(KvShift, AShiftByZeroIsBitIdentical) {
  for (DType kv : {DType::kF32, DType::kBF16}) {
    auto engine = MakeEngine(TinyModel(model::Arch::kQwen3_5), 2, 16, kv);
    const std::vector<int32_t> a = Tokens(150, engine->config().vocab, 7);
    Snapshot snap = Prefilled(*engine, a).Snap();
    Sequence seq = engine->NewSequence();
    ASSERT_TRUE(AppendShiftedRows(engine->config(), *snap.kv, 0, 30, seq).ok());
    ASSERT_TRUE(AppendShiftedRows(engine->config(), *snap.kv, 30, 120, seq).ok());
    cache::PageTable original(*snap.kv, 150);
    const cache::KvLayout& l = engine->kv_layout();
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      for (int64_t h = 0; h < l.num_kv_heads; ++h) {
        for (bool values : {false, true}) {
          const std::vector<float> got = Rows(seq.kv(), layer, h, values, 0, 150);
          const std::vector<float> want = Rows(original, layer, h, values, 0, 150);
          ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << "layer " << layer << " head " << h;
        }
      }
    }
  }
}

// Every attention layer of both architectures (qwen3_5 rotates only the first
// rope_dims = head_dim / 4 dims): shifted K = stored K rotated back by the
// source position and forward by the new one, in double; V unchanged.
TEST(KvShift, KIsRerotatedOnTheRotaryDimsOnly) {
  for (model::Arch arch : {model::Arch::kQwen3, model::Arch::kQwen3_5}) {
    auto engine = MakeEngine(TinyModel(arch));
    const model::ModelConfig& c = engine->config();
    const int64_t hd = engine->kv_layout().head_dim, rd = c.rope_dims;
    if (arch == model::Arch::kQwen3_5) {
      ASSERT_LT(rd, hd);
    }
    Snapshot snap = Prefilled(*engine, Tokens(200, c.vocab, 9)).Snap();
    Sequence seq = engine->NewSequence();
    ASSERT_TRUE(AppendShiftedRows(c, *snap.kv, 0, 3, seq).ok());
    ASSERT_TRUE(AppendShiftedRows(c, *snap.kv, 130, 70, seq).ok());  // delta -127
    cache::PageTable original(*snap.kv, 200);
    for (int64_t layer = 0; layer < engine->kv_layout().num_layers; ++layer) {
      const std::vector<float> got = Rows(seq.kv(), layer, 1, false, 3, 70);
      const std::vector<float> src = Rows(original, layer, 1, false, 130, 70);
      std::vector<double> want(src.begin(), src.end());
      for (int64_t r = 0; r < 70; ++r) {
        const double delta = (3.0 + r) - (130.0 + r);
        for (int64_t i = 0; i < rd / 2; ++i) {
          const double angle = delta * std::pow(c.rope_theta, -2.0 * i / rd);
          const double x = src[r * hd + i], y = src[r * hd + i + rd / 2];
          want[r * hd + i] = x * std::cos(angle) - y * std::sin(angle);
          want[r * hd + i + rd / 2] = x * std::sin(angle) + y * std::cos(angle);
        }
      }
      EXPECT_LT(MaxRelError(got, want), 1e-5) << model::ArchName(arch) << " layer " << layer;
      EXPECT_GT(MaxRelError(src, want), 1e-2);  // the rotation did something
      EXPECT_EQ(Rows(seq.kv(), layer, 1, true, 3, 70), Rows(original, layer, 1, true, 130, 70));
    }
  }
}

TEST(KvShift, BadRangesAndLayoutsAreRefusedWithoutWriting) {
  auto engine = MakeEngine(TinyModel(model::Arch::kQwen3));
  auto bf16 = MakeEngine(TinyModel(model::Arch::kQwen3), 2, 16, DType::kBF16);
  Snapshot snap = Prefilled(*engine, Tokens(50, engine->config().vocab)).Snap();
  Sequence seq = engine->NewSequence();
  EXPECT_EQ(AppendShiftedRows(engine->config(), *snap.kv, 40, 11, seq).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(AppendShiftedRows(engine->config(), *snap.kv, -1, 5, seq).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(AppendShiftedRows(engine->config(), *snap.kv, 0, -1, seq).code(), StatusCode::kOutOfRange);
  Sequence other = bf16->NewSequence();
  EXPECT_EQ(AppendShiftedRows(engine->config(), *snap.kv, 0, 5, other).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(seq.num_tokens(), 0);
  EXPECT_EQ(other.num_tokens(), 0);
  EXPECT_TRUE(AppendShiftedRows(engine->config(), *snap.kv, 50, 0, seq).ok());
  EXPECT_EQ(seq.num_tokens(), 0);
}

}  // namespace
}  // namespace lineage::engine
