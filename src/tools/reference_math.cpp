#include "tools/reference_math.h"

#include "model/encode.h"

namespace lineage::model {

Mat MatMul(const TensorView& w, const Mat& x) {
  const int64_t rows = w.shape[0], cols = w.shape[1];
  Mat y(x.size(), Vec(static_cast<size_t>(rows)));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    DecodeToFloat(w, r * cols, cols, row.data());
    for (size_t t = 0; t < x.size(); ++t) {
      double s = 0;
      for (int64_t i = 0; i < cols; ++i) s += static_cast<double>(row[i]) * x[t][i];
      y[t][r] = s;
    }
  }
  return y;
}

void RmsNormInPlace(double* x, int64_t n, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * inv * w[i];
}

Mat NormRows(const Mat& h, const std::vector<float>& w, double eps) {
  Mat out = h;
  for (Vec& row : out) RmsNormInPlace(row.data(), static_cast<int64_t>(row.size()), w, eps);
  return out;
}

void L2NormInPlace(double* x, int64_t n) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ss + 1e-6);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void DeltaRuleStep(Mat& S, const double* q, const double* k, const double* v, double beta, double* o) {
  const int64_t dk = static_cast<int64_t>(S.size()), dv = static_cast<int64_t>(S[0].size());
  for (int64_t j = 0; j < dv; ++j) {
    double m = 0;
    for (int64_t i = 0; i < dk; ++i) m += S[i][j] * k[i];
    const double delta = beta * (v[j] - m);
    for (int64_t i = 0; i < dk; ++i) S[i][j] += k[i] * delta;
  }
  for (int64_t j = 0; j < dv; ++j) {
    double s = 0;
    for (int64_t i = 0; i < dk; ++i) s += S[i][j] * q[i];
    o[j] = s;
  }
}

double GatedActivation(const ModelConfig& c, double g, double u) {
  if (c.situ.beta <= 0) return Silu(g) * u;
  const double b = c.situ.beta, lam = c.situ.linear_beta;
  return b * std::tanh(g / b) * Sigmoid(g) * (lam > 0 ? lam * std::tanh(u / lam) : u);
}

Mat SwiGlu(const ModelConfig& c, const TensorView& gate, const TensorView& up, const TensorView& down, const Mat& x) {
  Mat g = MatMul(gate, x);
  const Mat u = MatMul(up, x);
  for (size_t t = 0; t < g.size(); ++t)
    for (size_t i = 0; i < g[t].size(); ++i) g[t][i] = GatedActivation(c, g[t][i], u[t][i]);
  return MatMul(down, g);
}

}  // namespace lineage::model
