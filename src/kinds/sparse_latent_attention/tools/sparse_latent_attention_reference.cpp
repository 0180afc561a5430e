// Sparse latent attention's plain reference: the lightning indexer's
// selection, then latent attention over the selected keys.
#include "kinds/latent_attention/tools/latent_reference.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"
#include "tools/reference_math.h"

namespace lineage::kinds::sparse_latent_attention {
namespace {

using namespace model;
using latent_attention::PairAngle;
using latent_attention::RopeInterleaved;

// NEOX pairs (i, i + dims/2) the same way: deepseek32's indexer.
void RopeNeox(const ModelConfig& c, double* x, int64_t dims, int64_t pos) {
  const int64_t half = dims / 2;
  for (int64_t i = 0; i < half; ++i) {
    const auto [angle, gain] = PairAngle(c, i, dims, pos);
    const double cs = std::cos(angle) * gain, sn = std::sin(angle) * gain;
    const double x1 = x[i], x2 = x[i + half];
    x[i] = x1 * cs - x2 * sn;
    x[i + half] = x2 * cs + x1 * sn;
  }
}

// The lightning indexer (spec latent-attention §1.2) of a full layer over a whole sequence,
// in its plain form: every score of every (query, key) pair, then the top
// min(K, t + 1) keys of row t (ties to the lower position). No Hadamard
// rotation: (H q) . (H k) = q . k exactly in this precision.
Selection IndexerSelect(const ModelConfig& c, const MlaWeights& mla, const Mat& x) {
  const IndexerWeights& w = mla.indexer;
  const int64_t T = static_cast<int64_t>(x.size()), Hi = c.indexer.heads, D = c.indexer.dim;
  const int64_t rope = c.mla.qk_rope_dim;
  Mat iq = MatMul(w.q_b, NormRows(MatMul(mla.q_a, x), mla.q_a_norm, c.rms_eps));  // from the normed q latent
  Mat ik = MatMul(w.k, x);
  const Mat wts = MatMul(w.weights_proj, x);
  for (int64_t t = 0; t < T; ++t) {
    double mean = 0, var = 0;
    for (double e : ik[t]) mean += e;
    mean /= static_cast<double>(D);
    for (double e : ik[t]) var += (e - mean) * (e - mean);
    var /= static_cast<double>(D);
    const double inv = 1.0 / std::sqrt(var + c.indexer.norm_eps);
    for (int64_t i = 0; i < D; ++i) ik[t][i] = (ik[t][i] - mean) * inv * w.k_norm[i] + w.k_norm_bias[i];
    auto rotate = [&](double* head) {  // the head's first `rope` dims: [rope | nope]
      if (c.indexer.rope_neox) RopeNeox(c, head, rope, t);
      else RopeInterleaved(c, head, rope, t);
    };
    rotate(ik[t].data());
    for (int64_t h = 0; h < Hi; ++h) rotate(&iq[t][h * D]);
  }
  const double weight_scale = 1.0 / std::sqrt(static_cast<double>(D * Hi));
  Selection sel(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    Vec score(static_cast<size_t>(t + 1), 0.0);
    for (int64_t u = 0; u <= t; ++u)
      for (int64_t h = 0; h < Hi; ++h) {
        double dot = 0;
        for (int64_t i = 0; i < D; ++i) dot += iq[t][h * D + i] * ik[u][i];
        score[u] += wts[t][h] * weight_scale * std::max(0.0, dot);
      }
    std::vector<int64_t> order(static_cast<size_t>(t + 1));
    for (int64_t u = 0; u <= t; ++u) order[u] = u;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return score[a] > score[b]; });
    sel[t].assign(static_cast<size_t>(t + 1), 0);
    for (int64_t j = 0; j < std::min<int64_t>(c.indexer.top_k, t + 1); ++j) sel[t][order[j]] = 1;
  }
  return sel;
}

// A full layer selects; a shared one reuses the latest full layer's choice.
Mat Run(const ModelConfig& c, int64_t l, const LayerWeights& w, const Mat& x, ReferenceLayerState* state) {
  if (IndexerLayer(c, l)) state->selection = IndexerSelect(c, w.mla, x);
  return latent_attention::LatentAttention(c, w.mla, x, &state->selection);
}

}  // namespace

extern const model::ReferenceMixer kReference{Run};

}  // namespace lineage::kinds::sparse_latent_attention
