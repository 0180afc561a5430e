// The latent-attention families in the engine against llama.cpp's files and
// logits (../shared/data/models): tiny-glm-dsa (sparse latent attention,
// top_k 8 over a 40-token prompt, so the lightning indexer drops keys from
// position 8 on) and tiny-kimi-k3 (KDA with a bounded decay, gated MLA, the
// latent MoE, SiTU, Block AttnRes). The prefill's last logits within 1e-3 of
// llama.cpp's f32 forward and its 8 greedy tokens exactly, prefilled whole,
// in chunks and token by token; and the cache's equality: restoring a
// snapshot or a checkpoint gives llama.cpp's logits and tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "oracle_files.h"
#include "model/load_model.h"

namespace lineage::engine {
namespace {

using oracle_files::Argmax;
using oracle_files::ModelsDir;
using oracle_files::ReadIds;
using oracle_files::ReadLogits;

struct Oracle {
  std::shared_ptr<const model::Model> model;
  std::vector<int32_t> prompt, greedy;
  std::vector<float> logits;
};

// The file and its oracle, or false when the shared data is absent.
bool OpenOracle(Oracle* o, const std::string& name = "tiny-glm-dsa") {
  const std::string base = ModelsDir() + "/" + name;
  if (!std::filesystem::exists(base + ".gguf")) return false;
  auto m = model::LoadModel(base + ".gguf");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return false;
  o->model = *m;
  o->prompt = ReadIds(ModelsDir() + "/prompt_ids.txt");
  o->greedy = ReadIds(base + ".greedy.txt");
  o->logits = ReadLogits(base + ".logits.f32");
  return o->prompt.size() == 40 && o->greedy.size() == 8 && o->logits.size() == 1024;
}

std::unique_ptr<Engine> MakeEngine(const Oracle& o, int threads, DType kv = DType::kF32) {
  EngineOptions opt;
  opt.num_threads = threads;
  opt.kv_dtype = kv;
  auto e = Engine::Create(o.model, opt);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

// Greedy tokens decoded from `seq` after logits `first`, `n` of them.
std::vector<int32_t> GreedyFrom(Engine& e, Sequence& seq, std::vector<float> logits, size_t n) {
  std::vector<int32_t> out = {Argmax(logits)};
  while (out.size() < n) {
    Sequence* one[] = {&seq};
    const int32_t last = out.back();
    EXPECT_TRUE(e.Decode(one, std::span(&last, 1), &logits).ok());
    out.push_back(Argmax(logits));
  }
  return out;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

struct OracleCase {
  std::string name;
  int64_t chunk;
};

class LatentOracle : public ::testing::TestWithParam<OracleCase> {};

// Chunk sizes: the whole prompt, chunks that cross the top_k boundary (and
// K3's KDA chunk form), one token at a time.
TEST_P(LatentOracle, LogitsAndGreedyTokensMatchLlamaCpp) {
  Oracle o;
  if (!OpenOracle(&o, GetParam().name)) GTEST_SKIP() << GetParam().name << " oracle absent";
  for (int threads : {1, 2}) {
    auto e = MakeEngine(o, threads);
    Sequence seq = e->NewSequence();
    PrefillOptions po;
    po.chunk_tokens = GetParam().chunk;
    PrefillResult r;
    ASSERT_TRUE(e->Prefill(seq, o.prompt, po, &r).ok());
    const double worst = MaxAbsDiff(r.logits, o.logits);
    EXPECT_LE(worst, 1e-3) << "chunk " << GetParam().chunk << ", " << threads << " threads";
    EXPECT_EQ(GreedyFrom(*e, seq, r.logits, 8), o.greedy) << "chunk " << GetParam().chunk;
    if (threads == 2)
      std::printf("  %s chunk %lld: max |logit - llama.cpp| %.2g\n", GetParam().name.c_str(),
                  static_cast<long long>(GetParam().chunk), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LatentOracle,
                         ::testing::Values(OracleCase{"tiny-glm-dsa", 40}, OracleCase{"tiny-glm-dsa", 7},
                                           OracleCase{"tiny-glm-dsa", 1}, OracleCase{"tiny-kimi-k3", 40},
                                           OracleCase{"tiny-kimi-k3", 7}, OracleCase{"tiny-kimi-k3", 1}),
                         [](const auto& info) {
                           std::string n = info.param.name + "_" + std::to_string(info.param.chunk);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// Kimi K3 restored from a capture of its recurrent state at 24 tokens plus
// the KV rows of a 40-token entry, continued to the prompt's end, gives
// llama.cpp's logits and tokens.
TEST(KimiK3, RestoredCheckpointEqualsAColdRun) {
  Oracle o;
  if (!OpenOracle(&o, "tiny-kimi-k3")) GTEST_SKIP() << "tiny-kimi-k3 oracle absent";
  auto e = MakeEngine(o, 2);
  Sequence whole = e->NewSequence();
  const int64_t at[] = {24};
  PrefillOptions po;
  po.capture_at = at;
  PrefillResult r;
  ASSERT_TRUE(e->Prefill(whole, o.prompt, po, &r).ok());
  ASSERT_EQ(r.captures.size(), 1u);
  ASSERT_NE(r.captures[0].recurrent, nullptr);
  auto entry = whole.kv().Share();
  auto restored = e->AdmitCheckpoint(r.captures[0].recurrent.get(), 24, *entry);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  PrefillResult r2;
  ASSERT_TRUE(e->Prefill(*restored, std::span<const int32_t>(o.prompt).subspan(24), {}, &r2).ok());
  EXPECT_LE(MaxAbsDiff(r2.logits, o.logits), 1e-3);
  EXPECT_EQ(GreedyFrom(*e, *restored, r2.logits, 8), o.greedy);
}

// bf16 pages round the latent rows and the indexer keys (which llama.cpp
// rotates by the Hadamard matrix before rounding, as we do): the logits
// stay near, and the selection (no score within 1e-3 of a tie) the same.
TEST(SparseLatent, Bf16PagesKeepTheGreedyTokens) {
  Oracle o;
  if (!OpenOracle(&o)) GTEST_SKIP() << "tiny-glm-dsa oracle absent";
  auto e = MakeEngine(o, 2, DType::kBF16);
  Sequence seq = e->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(e->Prefill(seq, o.prompt, {}, &r).ok());
  EXPECT_LE(MaxAbsDiff(r.logits, o.logits), 0.05);
  EXPECT_EQ(GreedyFrom(*e, seq, r.logits, 8), o.greedy);
}

// A restore is a cold run: a snapshot at 24 tokens (past top_k, so the
// indexer keys of the restored pages decide the selection), and a checkpoint
// at 20 sharing the KV rows of a 40-token entry, both continued to the full
// prompt, give llama.cpp's logits and greedy tokens.
TEST(SparseLatent, RestoredSnapshotAndCheckpointEqualAColdRun) {
  Oracle o;
  if (!OpenOracle(&o)) GTEST_SKIP() << "tiny-glm-dsa oracle absent";
  auto e = MakeEngine(o, 2);
  const std::span<const int32_t> prompt(o.prompt);
  Sequence first = e->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(e->Prefill(first, prompt.first(24), {}, &r).ok());
  auto snap = first.kv().Share();
  auto restored = e->Admit(*snap, nullptr);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  ASSERT_TRUE(e->Prefill(*restored, prompt.subspan(24), {}, &r).ok());
  EXPECT_LE(MaxAbsDiff(r.logits, o.logits), 1e-3);
  EXPECT_EQ(GreedyFrom(*e, *restored, r.logits, 8), o.greedy);

  Sequence whole = e->NewSequence();
  ASSERT_TRUE(e->Prefill(whole, prompt, {}, &r).ok());
  auto entry = whole.kv().Share();
  auto from_checkpoint = e->AdmitCheckpoint(nullptr, 20, *entry);
  ASSERT_TRUE(from_checkpoint.ok()) << from_checkpoint.status().ToString();
  ASSERT_TRUE(e->Prefill(*from_checkpoint, prompt.subspan(20), {}, &r).ok());
  EXPECT_LE(MaxAbsDiff(r.logits, o.logits), 1e-3);
  EXPECT_EQ(GreedyFrom(*e, *from_checkpoint, r.logits, 8), o.greedy);
}

// Decode batched beside other sequences selects per sequence: each row's
// keys come from its own pages.
TEST(SparseLatent, BatchedDecodeEqualsDecodeAlone) {
  Oracle o;
  if (!OpenOracle(&o)) GTEST_SKIP() << "tiny-glm-dsa oracle absent";
  auto e = MakeEngine(o, 2);
  const std::span<const int32_t> prompt(o.prompt);
  Sequence a = e->NewSequence(), b = e->NewSequence(), alone = e->NewSequence();
  PrefillResult ra, rb, r;
  ASSERT_TRUE(e->Prefill(a, prompt, {}, &ra).ok());
  ASSERT_TRUE(e->Prefill(b, prompt.first(13), {}, &rb).ok());
  ASSERT_TRUE(e->Prefill(alone, prompt, {}, &r).ok());
  std::vector<float> batched, single;
  const int32_t tokens[] = {Argmax(ra.logits), Argmax(rb.logits)};
  Sequence* both[] = {&a, &b};
  ASSERT_TRUE(e->Decode(both, tokens, &batched).ok());
  Sequence* one[] = {&alone};
  ASSERT_TRUE(e->Decode(one, std::span(tokens, 1), &single).ok());
  const std::vector<float> first(batched.begin(), batched.begin() + 1024);
  EXPECT_LE(MaxAbsDiff(first, single), 1e-5);
}

}  // namespace
}  // namespace lineage::engine
