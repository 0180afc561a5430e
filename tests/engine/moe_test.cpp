// The MoE architectures (qwen3_5_moe, qwen3_next) on the optimized forward
// against the double-precision ReferenceForward, whose MoE is written
// separately (token by token, its own top-k): in-memory models, models
// loaded from both file formats, prefill cut at random points, and batched
// decode of sequences whose tokens chose different experts. Tolerance 1e-4
// relative (f32 weights, as reference_equivalence_test.cpp); a wrong routing
// or a wrong expert slice measures ~1.
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

class Moe : public ::testing::TestWithParam<model::Arch> {};

TEST_P(Moe, InMemoryModelMatchesReference) {
  // 70 prompt tokens: crosses a KV page boundary and a delta-rule chunk.
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(GetParam()), 80, 70), 1e-4);
}

TEST_P(Moe, LoadedFilesOfBothFormatsMatchReference) {
  auto spec = model::LookupShape(GetParam(), "tiny");
  ASSERT_TRUE(spec.ok());
  for (model::FileFormat f : {model::FileFormat::kSafetensors, model::FileFormat::kGguf}) {
    const bool gguf = f == model::FileFormat::kGguf;
    const std::string name = std::string("moe_") + model::ArchName(GetParam()) + (gguf ? ".gguf" : "_hf");
    const std::string path = model::testing_util::Write(*spec, f, DType::kF32, 5, name);
    auto m = model::LoadModel(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_TRUE((*m)->config.moe());
    EXPECT_LT(WorstErrorAgainstReference(*m, 40, 30), 1e-4) << name;
  }
}

TEST_P(Moe, PrefillCutAtRandomPoints) {
  auto m = TinyModel(GetParam());
  auto engine = MakeEngine(m);
  testing::ExpectRandomPrefillCutsMatchReference(m, *engine, 120, 40, 1e-4);
}

TEST_P(Moe, BatchedDecodeOfSequencesRoutedToDifferentExperts) {
  auto m = TinyModel(GetParam());
  const int64_t V = m->config.vocab;
  auto engine = MakeEngine(m);
  const int kSeqs = 3, kSteps = 5;
  std::vector<std::vector<int32_t>> streams;
  std::vector<std::vector<std::vector<double>>> refs;
  std::vector<model::ReferenceTrace> traces(kSeqs);
  std::vector<Sequence> seqs;
  const int64_t prompt[] = {9, 30, 17};
  for (int i = 0; i < kSeqs; ++i) {
    streams.push_back(Tokens(prompt[i] + kSteps, V, 40 + i));
    auto ref = model::ReferenceForward(*m, streams[i], &traces[i]);
    ASSERT_TRUE(ref.ok());
    refs.push_back(*ref);
    seqs.push_back(engine->NewSequence());
    PrefillResult r;
    ASSERT_TRUE(engine->Prefill(seqs[i], std::span(streams[i]).first(prompt[i]), {}, &r).ok());
  }
  int steps_with_distinct_routes = 0;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Sequence*> batch;
    std::vector<int32_t> toks;
    std::set<std::vector<int64_t>> routes;  // layer-0 expert sets of this step's rows
    for (int i = 0; i < kSeqs; ++i) {
      batch.push_back(&seqs[i]);
      toks.push_back(streams[i][prompt[i] + step]);
      std::vector<int64_t> chosen = traces[i].experts[0][prompt[i] + step];
      std::sort(chosen.begin(), chosen.end());
      routes.insert(chosen);
    }
    steps_with_distinct_routes += routes.size() > 1;
    std::vector<float> logits;
    ASSERT_TRUE(engine->Decode(batch, toks, &logits).ok());
    for (int i = 0; i < kSeqs; ++i) {
      const std::span<const float> row(logits.data() + i * V, V);
      EXPECT_LT(MaxRelError(row, refs[i][prompt[i] + step]), 1e-4) << "sequence " << i << " step " << step;
    }
  }
  // The batch really mixed experts (else this would test a dense FFN).
  EXPECT_GT(steps_with_distinct_routes, 0);
}

INSTANTIATE_TEST_SUITE_P(Archs, Moe, ::testing::Values(model::Arch::kQwen3_5Moe, model::Arch::kQwen3Next),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

TEST(MoeRouting, EveryExpertIsUsedAndTheTopKAreDistinct) {
  // The tiny models' routers spread tokens: over 200 positions every expert
  // of layer 0 is chosen, so the tests above touch every expert slice.
  for (model::Arch arch : {model::Arch::kQwen3_5Moe, model::Arch::kQwen3Next}) {
    auto m = TinyModel(arch);
    model::ReferenceTrace trace;
    ASSERT_TRUE(model::ReferenceForward(*m, Tokens(200, m->config.vocab, 5), &trace).ok());
    ASSERT_EQ(trace.experts.size(), static_cast<size_t>(m->config.num_layers));
    std::set<int64_t> used;
    for (const auto& chosen : trace.experts[0]) {
      ASSERT_EQ(chosen.size(), static_cast<size_t>(m->config.experts.per_token));
      EXPECT_EQ(std::set<int64_t>(chosen.begin(), chosen.end()).size(), chosen.size());
      used.insert(chosen.begin(), chosen.end());
    }
    EXPECT_EQ(used.size(), static_cast<size_t>(m->config.experts.count)) << model::ArchName(arch);
  }
}

}  // namespace
}  // namespace lineage::engine
