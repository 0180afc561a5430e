// Helpers shared by the engine tests: tiny random models, engines over them,
// token streams and the logit comparison every equivalence test states.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "model/random_model.h"
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

inline std::unique_ptr<Engine> MakeEngine(std::shared_ptr<const model::Model> m, int threads = 2) {
  EngineOptions o;
  o.num_threads = threads;
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

}  // namespace lineage::engine::testing
