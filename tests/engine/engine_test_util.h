// Helpers shared by the engine tests: tiny random models, engines over them,
// token streams and the logit comparison every equivalence test states.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "engine/engine.h"
#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "model/shapes.h"

namespace lineage::engine::testing {

inline std::shared_ptr<const model::Model> TinyModel(model::Arch arch, DType dtype = DType::kF32,
                                                     uint64_t seed = 11) {
  auto spec = model::LookupShape(arch, "tiny");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  auto m = model::MakeRandomModel(*spec, dtype, seed);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

inline std::unique_ptr<Engine> MakeEngine(std::shared_ptr<const model::Model> m, int threads = 2,
                                          int64_t delta_chunked_min_tokens = 16, DType kv_dtype = DType::kF32) {
  EngineOptions o;
  o.num_threads = threads;
  o.kv_dtype = kv_dtype;
  o.delta_chunked_min_tokens = delta_chunked_min_tokens;
  auto e = Engine::Create(std::move(m), o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

inline std::vector<int32_t> Tokens(int64_t n, int64_t vocab, uint32_t salt = 0) {
  std::vector<int32_t> t;
  uint32_t x = 2463534242u + salt * 7919u;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    t.push_back(static_cast<int32_t>(x % static_cast<uint32_t>(vocab)));
  }
  return t;
}

// max_i |a_i - b_i| / max_i |b_i|: the error relative to the row's scale.
template <typename A, typename B>
double MaxRelError(const A& a, const B& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

inline std::vector<float> ColdPrefill(Engine& e, const std::vector<int32_t>& tokens) {
  Sequence seq = e.NewSequence();
  PrefillResult r;
  Status st = e.Prefill(seq, tokens, {}, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r.logits;
}

// `seq` holds exactly `tokens` (say, after speculative rounds): its snapshot,
// restored and continued by a prefill of a few more, gives the logits of a
// cold prefill of all of them.
inline void ExpectRestoreEqualsCold(Engine& e, const Sequence& seq, std::vector<int32_t> tokens) {
  const Snapshot snap = seq.Snap();
  ASSERT_EQ(snap.num_tokens(), static_cast<int64_t>(tokens.size()));
  auto restored = e.Admit(*snap.kv, snap.recurrent.get());
  ASSERT_TRUE(restored.ok());
  const std::vector<int32_t> more = Tokens(9, e.config().vocab, 8);
  PrefillResult warm;
  ASSERT_TRUE(e.Prefill(*restored, more, {}, &warm).ok());
  tokens.insert(tokens.end(), more.begin(), more.end());
  EXPECT_LT(MaxRelError(warm.logits, ColdPrefill(e, tokens)), 1e-4);
}

// Prefills the first `prefill` tokens, decodes the rest one by one, and
// returns the worst relative error against the reference over all of them.
inline double WorstErrorAgainstReference(std::shared_ptr<const model::Model> m, int64_t num_tokens, int64_t prefill,
                                         DType kv_dtype = DType::kF32) {
  const std::vector<int32_t> tokens = Tokens(num_tokens, m->config.vocab);
  auto ref = model::ReferenceForward(*m, tokens);
  EXPECT_TRUE(ref.ok()) << ref.status().ToString();
  auto engine = MakeEngine(m, 2, 16, kv_dtype);
  Sequence seq = engine->NewSequence();
  PrefillResult r;
  EXPECT_TRUE(engine->Prefill(seq, std::span(tokens).first(prefill), {}, &r).ok());
  double worst = MaxRelError(r.logits, (*ref)[prefill - 1]);
  std::vector<float> logits;
  for (int64_t t = prefill; t < num_tokens; ++t) {
    Sequence* one[] = {&seq};
    EXPECT_TRUE(engine->Decode(one, std::span(tokens).subspan(t, 1), &logits).ok());
    worst = std::max(worst, MaxRelError(logits, (*ref)[t]));
  }
  std::printf("  %s %s weights, %s KV: max relative logit error %.3g\n", model::ArchName(m->config.arch),
              std::string(Info(m->weights.embed.dtype).name).c_str(), std::string(Info(kv_dtype).name).c_str(), worst);
  return worst;
}

// Prefills `num_tokens` tokens in pieces of 1..max_piece tokens at random
// (three times, each from an empty sequence) and expects the logits after
// every piece within `tol` of the reference.
inline void ExpectRandomPrefillCutsMatchReference(const std::shared_ptr<const model::Model>& m, Engine& engine,
                                                  int64_t num_tokens, int64_t max_piece, double tol) {
  const std::vector<int32_t> tokens = Tokens(num_tokens, m->config.vocab, 3);
  auto ref = model::ReferenceForward(*m, tokens);
  ASSERT_TRUE(ref.ok());
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    Sequence seq = engine.NewSequence();
    int64_t done = 0;
    while (done < num_tokens) {
      const int64_t n = std::min<int64_t>(num_tokens - done, 1 + rng() % max_piece);
      PrefillResult r;
      ASSERT_TRUE(engine.Prefill(seq, std::span(tokens).subspan(done, n), {}, &r).ok());
      done += n;
      EXPECT_LT(MaxRelError(r.logits, (*ref)[done - 1]), tol) << "trial " << trial << " after " << done;
    }
  }
}

}  // namespace lineage::engine::testing
