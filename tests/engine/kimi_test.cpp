// Kimi Linear (KDA + MLA + DeepSeek MoE) on the optimized forward against the
// double-precision ReferenceForward, whose KDA is the token-by-token
// recurrence, whose MLA expands every head's keys and values from the
// latent (the fast path never does: it absorbs W_k into the query and W_v
// after attention) and whose MoE routes token by token: in-memory models,
// both file formats, prefill cut at random points, batched decode, and MLA
// shapes other than tiny's. Tolerance 1e-4 relative (f32 weights and pages);
// a wrong decay channel, latent half or routing measures ~1.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engine_test_util.h"
#include "model/load_model.h"
#include "model/test_util.h"

namespace lineage::engine {
namespace {

using testing::MakeEngine;
using testing::MaxRelError;
using testing::TinyModel;
using testing::Tokens;
using testing::WorstErrorAgainstReference;

constexpr model::Arch kKimi = model::Arch::kKimiLinear;

TEST(Kimi, InMemoryModelMatchesReference) {
  // 70 prompt tokens: crosses a KV page and several KDA chunks; then decode.
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(kKimi), 80, 70), 1e-4);
}

// A context of many pages (590 rows): the prefill's row blocks run on both
// threads against ever longer runs of cached latent rows, and each decode
// step of the lone sequence splits its heads between the threads.
TEST(Kimi, LongContextPrefillAndDecodeMatchReference) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(kKimi), 600, 590), 1e-4);
}

TEST(Kimi, LoadedFilesOfBothFormatsMatchReference) {
  auto spec = model::LookupShape(kKimi, "tiny");
  ASSERT_TRUE(spec.ok());
  for (model::FileFormat f : {model::FileFormat::kSafetensors, model::FileFormat::kGguf}) {
    const bool gguf = f == model::FileFormat::kGguf;
    const std::string name = gguf ? "kimi_engine.gguf" : "kimi_engine_hf";
    auto m = model::LoadModel(model::testing_util::Write(*spec, f, DType::kF32, 5, name));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_LT(WorstErrorAgainstReference(*m, 40, 30), 1e-4) << name;
  }
}

TEST(Kimi, PrefillCutAtRandomPoints) {
  auto m = TinyModel(kKimi);
  // Chunked KDA from 4 tokens on, so short and long pieces take both kernels.
  auto engine = MakeEngine(m, 2, 4);
  testing::ExpectRandomPrefillCutsMatchReference(m, *engine, 130, 40, 1e-4);
}

TEST(Kimi, BatchedDecodeOfSequencesOfDifferentLengths) {
  auto m = TinyModel(kKimi);
  const int64_t V = m->config.vocab;
  auto engine = MakeEngine(m);
  const int kSeqs = 3, kSteps = 5;
  const int64_t prompt[] = {9, 70, 17};
  std::vector<std::vector<int32_t>> streams;
  std::vector<std::vector<std::vector<double>>> refs;
  std::vector<Sequence> seqs;
  for (int i = 0; i < kSeqs; ++i) {
    streams.push_back(Tokens(prompt[i] + kSteps, V, 40 + i));
    auto ref = model::ReferenceForward(*m, streams[i]);
    ASSERT_TRUE(ref.ok());
    refs.push_back(*ref);
    seqs.push_back(engine->NewSequence());
    PrefillResult r;
    ASSERT_TRUE(engine->Prefill(seqs[i], std::span(streams[i]).first(prompt[i]), {}, &r).ok());
  }
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Sequence*> batch;
    std::vector<int32_t> toks;
    for (int i = 0; i < kSeqs; ++i) {
      batch.push_back(&seqs[i]);
      toks.push_back(streams[i][prompt[i] + step]);
    }
    std::vector<float> logits;
    ASSERT_TRUE(engine->Decode(batch, toks, &logits).ok());
    for (int i = 0; i < kSeqs; ++i) {
      const std::span<const float> row(logits.data() + i * V, V);
      EXPECT_LT(MaxRelError(row, refs[i][prompt[i] + step]), 1e-4) << "sequence " << i << " step " << step;
    }
  }
}

// Absorbed (fast) against unabsorbed (reference) MLA on shapes unlike
// tiny's: latent rank above and below the head sizes, odd head counts, a
// rope part wider than the nope part.
TEST(Kimi, AbsorbedLatentAttentionMatchesUnabsorbedOnRandomShapes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    auto spec = model::LookupShape(kKimi, "tiny");
    ASSERT_TRUE(spec.ok());
    model::ModelConfig& c = spec->config;
    c.num_heads = 1 + rng() % 5;
    c.mla.kv_lora_rank = 8 * (1 + rng() % 8);
    c.mla.qk_nope_dim = 8 * (1 + rng() % 4);
    c.mla.qk_rope_dim = 8 * (1 + rng() % 3);
    if ((c.mla.kv_lora_rank + c.mla.qk_rope_dim) % 2 != 0 || c.mla.kv_lora_rank < c.mla.qk_rope_dim) c.mla.kv_lora_rank += 8;
    c.mla.v_head_dim = 8 * (1 + rng() % 4);
    c.head_dim = c.mla.qk_nope_dim + c.mla.qk_rope_dim;
    c.rope_dims = c.mla.qk_rope_dim;
    auto m = model::MakeRandomModel(*spec, DType::kF32, 20 + trial);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_LT(WorstErrorAgainstReference(*m, 75, 68), 1e-4)
        << "heads " << c.num_heads << " rank " << c.mla.kv_lora_rank << " nope " << c.mla.qk_nope_dim << " rope "
        << c.mla.qk_rope_dim << " v " << c.mla.v_head_dim;
  }
}

TEST(Kimi, LatentPagesHoldOneRowOfTheLatentWidthPerToken) {
  auto m = TinyModel(kKimi);
  auto engine = MakeEngine(m);
  const cache::KvLayout& l = engine->kv_layout();
  EXPECT_EQ(l.num_layers, 2);
  EXPECT_EQ(l.layer_elements(), l.page_tokens * m->config.mla.latent_dim());  // K half + V half
  EXPECT_EQ(l.page_bytes() / l.page_tokens, m->config.kv_bytes_per_token());
}

TEST(Kimi, RoutingSpreadsOverEveryExpert) {
  auto m = TinyModel(kKimi);
  model::ReferenceTrace trace;
  ASSERT_TRUE(model::ReferenceForward(*m, Tokens(200, m->config.vocab, 5), &trace).ok());
  ASSERT_EQ(trace.experts.size(), static_cast<size_t>(m->config.num_layers - 1));
  std::set<int64_t> used;
  for (const auto& chosen : trace.experts[0]) {
    ASSERT_EQ(chosen.size(), static_cast<size_t>(m->config.experts.per_token));
    used.insert(chosen.begin(), chosen.end());
  }
  EXPECT_EQ(used.size(), static_cast<size_t>(m->config.experts.count));
}

}  // namespace
}  // namespace lineage::engine
