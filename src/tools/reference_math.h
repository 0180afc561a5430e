// The plain double-precision math the reference forward (reference_forward.h)
// and each layer kind's reference (src/kinds/KIND/tools/) are written in:
// slow on purpose, separate from the engine, the independent oracle of the
// fast path.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/tensor_view.h"
#include "model/config.h"
#include "model/weights.h"

namespace lineage::model {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // [T][n]: one row per token

// The keys each query may attend to: selected[t][u] for u <= t.
using Selection = std::vector<std::vector<char>>;

// What a reference forward carries from one layer to the next: the latest
// full sparse layer's selection, for the shared layers above it.
struct ReferenceLayerState {
  Selection selection;
};

// A layer kind's reference (from its folder, registered by kinds.def):
// its mixer over the normed rows of a whole sequence from an empty state;
// its feed-forward, filling `chosen` (when given) with each row's experts.
struct ReferenceMixer {
  Mat (*run)(const ModelConfig& c, int64_t layer, const LayerWeights& w, const Mat& x, ReferenceLayerState* state);
};
struct ReferenceFfn {
  Mat (*run)(const ModelConfig& c, const LayerWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen);
};

inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double Silu(double x) { return x * Sigmoid(x); }
inline double Softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

// Y[t] = W X[t] for a weight W [out, in]; each row is decoded once.
Mat MatMul(const TensorView& w, const Mat& x);
// RMSNorm of x[0, n) with scale w (the effective scale), in place.
void RmsNormInPlace(double* x, int64_t n, const std::vector<float>& w, double eps);
Mat NormRows(const Mat& h, const std::vector<float>& w, double eps);
void L2NormInPlace(double* x, int64_t n);
// The delta rule's write and read on a decayed state S [d_k][d_v] (spec
// §2.5, §7.2; Gated DeltaNet and KDA): delta = beta (v - S^T k),
// S += k delta^T, then o = S^T q.
void DeltaRuleStep(Mat& S, const double* q, const double* k, const double* v, double beta, double* o);
// The gated activation of an FFN: silu(g) u, or Kimi K3's SiTU (spec
// latent-attention §2.4) beta tanh(g / beta) sigmoid(g) lambda tanh(u /
// lambda) when c.situ.beta > 0 (u itself for lambda <= 0).
double GatedActivation(const ModelConfig& c, double g, double u);
// down(act(gate x, up x)): the dense FFN, and each expert of the MoE kinds.
Mat SwiGlu(const ModelConfig& c, const TensorView& gate, const TensorView& up, const TensorView& down, const Mat& x);

}  // namespace lineage::model
