#include "engine/layer_table.h"

#include <algorithm>

namespace lineage::engine {
namespace {

using model::MixerKind;

// Each kind's step, at its slots. A mixer kind is recurrent or keeps KV
// rows (model::Info(kind).recurrent), which decides the slot it takes.
void RunGdn(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  GatedDeltaNet(w.linear, at.state, ctx, xn, out);
}
void RunKda(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  KimiDeltaAttention(w.kda, at.state, ctx, xn, out);
}
void RunAttention(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn,
                  float* out) {
  SelfAttention(w.full, at.kv, ctx, xn, out);
}
void RunLatent(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn,
               float* out) {
  LatentAttention(w.mla, at.kv, at.index, false, ctx, xn, out);
}
void RunSparseLatent(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn,
                     float* out) {
  LatentAttention(w.mla, at.kv, at.index, true, ctx, xn, out);
}

using MixerFn = void (*)(const model::LayerWeights&, const LayerSlots&, const StepContext&, const float*, float*);
// In model::MixerKind order.
constexpr MixerFn kMixers[] = {RunGdn, RunKda, RunAttention, RunLatent, RunSparseLatent};

}  // namespace

void RunMixer(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, LayerSlots& slots,
              const StepContext& ctx, const float* xn, float* out) {
  const MixerKind kind = c.mixer(l);
  LayerSlots at = slots;
  at.index = c.indexer_layer(l) ? slots.index++ : -1;
  if (model::Info(kind).recurrent) {
    ++slots.state;
  } else {
    ++slots.kv;
  }
  kMixers[static_cast<int>(kind)](w, at, ctx, xn, out);
}

void RunFfn(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, const StepContext& ctx,
            const float* xn, float* out) {
  switch (c.ffn(l)) {
    case model::FfnKind::kDense: return FeedForward(w, ctx, xn, out);
    case model::FfnKind::kMoe:
    case model::FfnKind::kDeepseekMoe: return MoeFeedForward(w.moe, ctx, xn, out);
  }
}

std::vector<const TensorView*> MixerMatrices(MixerKind kind, const model::LayerWeights& w) {
  std::vector<const TensorView*> out;
  switch (kind) {
    case MixerKind::kGatedDeltaNet: {
      const model::LinearAttentionWeights& g = w.linear;
      out = {&g.in_proj_qkv, &g.in_proj_z, &g.in_proj_b, &g.in_proj_a, &g.in_proj_qkvz, &g.in_proj_ba, &g.out_proj};
      break;
    }
    case MixerKind::kKimiDelta: {
      const model::KdaWeights& k = w.kda;
      out = {&k.q_proj, &k.k_proj, &k.v_proj, &k.f_a, &k.f_b, &k.b_proj, &k.g_a, &k.g_b, &k.g_full, &k.o_proj};
      break;
    }
    case MixerKind::kAttention: {
      const model::FullAttentionWeights& a = w.full;
      out = {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj};
      break;
    }
    case MixerKind::kLatent:
    case MixerKind::kSparseLatent: {
      const model::MlaWeights& a = w.mla;
      out = {&a.q_proj, &a.q_a, &a.q_b, &a.kv_a, &a.out_gate, &a.o_proj};
      for (const TensorView& t : a.k_b_t) out.push_back(&t);
      for (const TensorView& t : a.v_b) out.push_back(&t);
      const model::IndexerWeights& x = a.indexer;  // absent on shared layers
      for (const TensorView* t : {&x.q_b, &x.k, &x.weights_proj}) out.push_back(t);
      break;
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const TensorView* t) { return !t->valid(); }), out.end());
  return out;
}

std::vector<std::pair<std::string, const std::vector<float>*>> MixerVectors(MixerKind kind,
                                                                             const model::LayerWeights& w) {
  switch (kind) {
    case MixerKind::kGatedDeltaNet:
      return {{"conv", &w.linear.conv}, {"dt_bias", &w.linear.dt_bias}, {"ssm_a", &w.linear.ssm_a},
              {"norm", &w.linear.norm}};
    case MixerKind::kKimiDelta:
      return {{"conv", &w.kda.conv}, {"dt_bias", &w.kda.dt_bias}, {"ssm_a", &w.kda.ssm_a}, {"norm", &w.kda.norm}};
    case MixerKind::kAttention:
      return {{"q_norm", &w.full.q_norm}, {"k_norm", &w.full.k_norm}};
    case MixerKind::kLatent:
    case MixerKind::kSparseLatent:
      return {{"kv_a_norm", &w.mla.kv_a_norm}, {"q_a_norm", &w.mla.q_a_norm},
              {"index_k_norm", &w.mla.indexer.k_norm}, {"index_k_norm_bias", &w.mla.indexer.k_norm_bias}};
  }
  return {};
}

}  // namespace lineage::engine
