// The Qwen MoE's plain reference.
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::moe {
namespace {

using namespace model;

// Sparse MoE FFN (spec §4.3), token by token: softmax over all router
// logits, the top k (ties to the lower expert id) renormalised to sum to 1,
// plus the shared expert scaled by sigmoid(x . shared_gate_inp).
Mat Moe(const ModelConfig& c, const MoeWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen_out) {
  const int64_t E = c.experts.count, k = c.experts.per_token;
  const Mat logits = MatMul(w.router, x);
  Mat out = SwiGlu(c, w.shared_gate, w.shared_up, w.shared_down, x);
  for (size_t t = 0; t < x.size(); ++t) {
    double s = 0;
    for (size_t i = 0; i < x[t].size(); ++i) s += static_cast<double>(w.shared_gate_inp[i]) * x[t][i];
    for (double& o : out[t]) o *= Sigmoid(s);
    const double mx = *std::max_element(logits[t].begin(), logits[t].end());
    Vec p(static_cast<size_t>(E));
    double sum = 0;
    for (int64_t e = 0; e < E; ++e) sum += (p[e] = std::exp(logits[t][e] - mx));
    for (double& v : p) v /= sum;
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int64_t j = 0; j < k; ++j) chosen += p[order[j]];
    if (chosen_out) chosen_out->emplace_back(order.begin(), order.begin() + k);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = order[j];
      const Vec y = SwiGlu(c, w.gate[e], w.up[e], w.down[e], Mat{x[t]})[0];
      for (size_t i = 0; i < y.size(); ++i) out[t][i] += p[e] / chosen * y[i];
    }
  }
  return out;
}

Mat Run(const ModelConfig& c, const LayerWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen) {
  return Moe(c, w.moe, x, chosen);
}

}  // namespace

extern const model::ReferenceFfn kReference{Run};

}  // namespace lineage::kinds::moe
