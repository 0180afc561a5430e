// The DeepSeek-V3 MoE's plain reference.
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::deepseek_moe {
namespace {

using namespace model;

// DeepSeek-V3 MoE (spec §7.4; latent-attention §1.7), token by token: s =
// sigmoid(router x); with expert groups, a group scores the sum of its two
// best s + score_bias and only the best experts.groups_used groups stay
// eligible; the top k eligible of s + score_bias (ties to the lower id) are
// chosen; weights s, renormalised (sum clamped at 6.1035e-5) when
// experts.renormalise, times experts.routed_scaling; plus the ungated shared expert.
Mat KimiMoe(const ModelConfig& c, const MoeWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen_out) {
  const int64_t E = c.experts.count, k = c.experts.per_token, G = c.experts.groups, per_group = E / G;
  const Mat logits = MatMul(w.router, x);
  Mat out = SwiGlu(c, w.shared_gate, w.shared_up, w.shared_down, x);
  for (size_t t = 0; t < x.size(); ++t) {
    Vec s(static_cast<size_t>(E)), sel(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      s[e] = Sigmoid(logits[t][e]);
      sel[e] = s[e] + w.score_bias[e];
    }
    if (G > 1) {
      Vec group_score(static_cast<size_t>(G));
      for (int64_t g = 0; g < G; ++g) {
        Vec members(sel.begin() + g * per_group, sel.begin() + (g + 1) * per_group);
        std::sort(members.rbegin(), members.rend());
        group_score[g] = members[0] + (per_group > 1 ? members[1] : 0.0);
      }
      std::vector<int64_t> groups(static_cast<size_t>(G));
      for (int64_t g = 0; g < G; ++g) groups[g] = g;
      std::stable_sort(groups.begin(), groups.end(), [&](int64_t a, int64_t b) { return group_score[a] > group_score[b]; });
      for (int64_t j = c.experts.groups_used; j < G; ++j)
        for (int64_t e = groups[j] * per_group; e < (groups[j] + 1) * per_group; ++e) sel[e] = -1e300;
    }
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sel[a] > sel[b]; });
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += s[order[j]];
    const double norm = c.experts.renormalise ? std::max(sum, 6.1035e-5) : 1.0;
    if (chosen_out) chosen_out->emplace_back(order.begin(), order.begin() + k);
    // K3 (spec latent-attention §2.3): the experts run on z = latent_down x,
    // and their weighted sum r becomes latent_up (rmsnorm(r) latent_norm).
    const Vec z = w.latent_down.valid() ? MatMul(w.latent_down, Mat{x[t]})[0] : x[t];
    Vec r(z.size(), 0.0);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = order[j];
      const Vec y = SwiGlu(c, w.gate[e], w.up[e], w.down[e], Mat{z})[0];
      for (size_t i = 0; i < y.size(); ++i) r[i] += s[e] / norm * c.experts.routed_scaling * y[i];
    }
    if (w.latent_up.valid()) {
      if (!w.latent_norm.empty()) RmsNormInPlace(r.data(), static_cast<int64_t>(r.size()), w.latent_norm, c.rms_eps);
      r = MatMul(w.latent_up, Mat{r})[0];
    }
    for (size_t i = 0; i < r.size(); ++i) out[t][i] += r[i];
  }
  return out;
}

Mat Run(const ModelConfig& c, const LayerWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen) {
  return KimiMoe(c, w.moe, x, chosen);
}

}  // namespace

extern const model::ReferenceFfn kReference{Run};

}  // namespace lineage::kinds::deepseek_moe
