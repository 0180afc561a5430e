#include "tools/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "tools/reference_math.h"

#define LINEAGE_KIND_SYMBOL kReference
#define LINEAGE_KIND_MIXER_TYPE ::lineage::model::ReferenceMixer
#define LINEAGE_KIND_FFN_TYPE ::lineage::model::ReferenceFfn
#include "kinds/registry.inc"

namespace lineage::model {
namespace {

// Block AttnRes' mix (spec latent-attention §2.5) of row t: the softmax over
// [bank..., c] of each vector's weightless RMSNorm dotted with `w`, applied
// to the raw vectors.
Mat AttnResMix(const ModelConfig& c, const std::vector<Mat>& bank, const Mat& cur, const std::vector<float>& w) {
  if (bank.empty()) return cur;
  Mat out = cur;
  const int64_t H = c.hidden;
  auto score = [&](const Vec& v) {
    double ss = 0, dot = 0;
    for (int64_t i = 0; i < H; ++i) ss += v[i] * v[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(H) + c.rms_eps);
    for (int64_t i = 0; i < H; ++i) dot += v[i] * inv * w[i];
    return dot;
  };
  for (size_t t = 0; t < cur.size(); ++t) {
    Vec s;
    for (const Mat& b : bank) s.push_back(score(b[t]));
    s.push_back(score(cur[t]));
    const double mx = *std::max_element(s.begin(), s.end());
    double sum = 0;
    for (double& e : s) sum += (e = std::exp(e - mx));
    for (int64_t i = 0; i < H; ++i) {
      double v = s.back() / sum * cur[t][i];
      for (size_t j = 0; j < bank.size(); ++j) v += s[j] / sum * bank[j][t][i];
      out[t][i] = v;
    }
  }
  return out;
}

void AddInPlace(Mat& h, const Mat& d) {
  for (size_t t = 0; t < h.size(); ++t)
    for (size_t i = 0; i < h[t].size(); ++i) h[t][i] += d[t][i];
}

double MaxRms(const Mat& h) {
  double mx = 0;
  for (const Vec& row : h) {
    double ss = 0;
    for (double e : row) ss += e * e;
    mx = std::max(mx, std::sqrt(ss / static_cast<double>(row.size())));
  }
  return mx;
}

// Layer l's mixer and feed-forward by its kinds (layer_kinds.h); l = L is
// the MTP block (weights `L`).
Mat Mixer(const ModelConfig& c, int64_t l, const LayerWeights& L, const Mat& x, ReferenceLayerState* state) {
  return kinds::kMixerTable[static_cast<int>(c.mixer(l))]->run(c, l, L, x, state);
}

Mat Ffn(const ModelConfig& c, int64_t l, const LayerWeights& L, const Mat& x,
        std::vector<std::vector<int64_t>>* chosen) {
  return kinds::kFfnTable[static_cast<int>(c.ffn(l))]->run(c, L, x, chosen);
}

// The final-normed residual stream of every position of `tokens` (the input
// of the head), starting from an empty state.
Result<Mat> TrunkStates(const Model& model, const std::vector<int32_t>& tokens, ReferenceTrace* trace) {
  const ModelConfig& c = model.config;
  const Weights& w = model.weights;
  const int64_t H = c.hidden;
  Mat h(tokens.size(), Vec(static_cast<size_t>(H)));
  std::vector<float> row(static_cast<size_t>(H));
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab)
      return InvalidArgument("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t) +
                             " is outside the vocabulary of " + std::to_string(c.vocab));
    DecodeToFloat(w.embed, static_cast<int64_t>(tokens[t]) * H, H, row.data());
    std::copy(row.begin(), row.end(), h[t].begin());
  }
  if (trace) {
    trace->layer_rms.clear();
    trace->experts.clear();
  }
  ReferenceLayerState state;
  std::vector<Mat> bank;  // Block AttnRes' checkpoints (K3)
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    std::vector<std::vector<int64_t>>* chosen = trace && c.moe_layer(l) ? &trace->experts.emplace_back() : nullptr;
    if (c.attn_res_block > 0) {  // spec latent-attention §2.5: mix, bank, mixer, restart, mix, FFN
      const Mat a = AttnResMix(c, bank, h, L.attn_res_score);
      const bool banked = l % c.attn_res_block == 0;
      if (banked) bank.push_back(h);
      const Mat y = Mixer(c, l, L, NormRows(a, L.input_norm, c.rms_eps), &state);
      if (banked) h = y;
      else AddInPlace(h, y);
      AddInPlace(h, Ffn(c, l, L, NormRows(AttnResMix(c, bank, h, L.ffn_res_score), L.post_norm, c.rms_eps), chosen));
    } else {
      AddInPlace(h, Mixer(c, l, L, NormRows(h, L.input_norm, c.rms_eps), &state));
      AddInPlace(h, Ffn(c, l, L, NormRows(h, L.post_norm, c.rms_eps), chosen));
    }
    if (trace) trace->layer_rms.push_back(MaxRms(h));
  }
  if (c.attn_res_block > 0) h = AttnResMix(c, bank, h, w.output_res_score);
  return NormRows(h, w.final_norm, c.rms_eps);
}

}  // namespace

Result<std::vector<std::vector<double>>> ReferenceForward(const Model& model,
                                                         const std::vector<int32_t>& tokens,
                                                         ReferenceTrace* trace) {
  LINEAGE_ASSIGN_OR_RETURN(Mat h, TrunkStates(model, tokens, trace));
  return MatMul(model.weights.lm_head, h);
}

Result<std::vector<std::vector<double>>> ReferenceMtpDrafts(const Model& model, const std::vector<int32_t>& tokens,
                                                           int64_t k) {
  const ModelConfig& c = model.config;
  const MtpWeights& m = model.weights.mtp;
  if (!c.mtp() || !m.valid()) return InvalidArgument("the model has no MTP block");
  if (tokens.size() < 2) return InvalidArgument("MTP drafts follow at least two tokens");
  const int64_t H = c.hidden, n = static_cast<int64_t>(tokens.size()) - 1;
  LINEAGE_ASSIGN_OR_RETURN(Mat h, TrunkStates(model, std::vector<int32_t>(tokens.begin(), tokens.end() - 1), nullptr));
  // The block's input row for a token and the state before it (none: zeros).
  std::vector<float> e(static_cast<size_t>(H));
  auto input = [&](int32_t token, const Vec* state) {
    Vec in(static_cast<size_t>(2 * H), 0.0);
    DecodeToFloat(model.weights.embed, static_cast<int64_t>(token) * H, H, e.data());
    std::copy(e.begin(), e.end(), in.begin());
    RmsNormInPlace(in.data(), H, m.enorm, c.rms_eps);
    if (state != nullptr) {
      std::copy(state->begin(), state->end(), in.begin() + H);
      RmsNormInPlace(in.data() + H, H, m.hnorm, c.rms_eps);
    }
    return in;
  };
  Mat in;
  for (int64_t j = 0; j <= n; ++j) in.push_back(input(tokens[static_cast<size_t>(j)], j > 0 ? &h[j - 1] : nullptr));
  std::vector<std::vector<double>> logits;
  for (int64_t d = 0; d < k; ++d) {
    // The whole block over rows [0, n + d] (causal: earlier rows' outputs do not change).
    Mat x = MatMul(m.eh_proj, in);
    const LayerWeights& L = m.layer;
    ReferenceLayerState state;
    AddInPlace(x, Mixer(c, c.num_layers, L, NormRows(x, L.input_norm, c.rms_eps), &state));
    AddInPlace(x, Ffn(c, c.num_layers, L, NormRows(x, L.post_norm, c.rms_eps), nullptr));
    const Mat last = NormRows(Mat{x.back()}, m.head_norm, c.rms_eps);
    logits.push_back(MatMul(model.weights.lm_head, last)[0]);
    const Vec& row = logits.back();
    const int32_t draft = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    in.push_back(input(draft, &last[0]));
  }
  return logits;
}

}  // namespace lineage::model
