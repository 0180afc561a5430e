#include "engine/rope.h"

#include <algorithm>
#include <cmath>

namespace lineage::engine {

Yarn LatentYarn(const model::ModelConfig& c) {
  Yarn y;
  if (c.mla.yarn_factor <= 1) return y;
  y.factor = c.mla.yarn_factor;
  y.original_context = c.mla.yarn_original_context;
  const double ln = std::log(c.mla.yarn_factor);
  y.gain = (1.0 + 0.1 * ln) / (1.0 + 0.1 * c.mla.yarn_mscale_all_dim * ln);
  return y;
}

void RopeTable(int64_t positions_start, int64_t rows, int64_t rot_dims, double theta, float* table,
               const Yarn& yarn) {
  const int64_t half = rot_dims / 2;
  const double dims = static_cast<double>(rot_dims);
  // ggml's correction dims: the pair that turns n_rot times over the
  // original context, floor / ceil, clamped to the dims.
  auto corr_dim = [&](double n_rot) {
    return dims * std::log(static_cast<double>(yarn.original_context) / (n_rot * 2.0 * M_PI)) / (2.0 * std::log(theta));
  };
  double low = 0, high = 0;
  if (yarn.factor > 0) {
    low = std::max(0.0, std::floor(corr_dim(yarn.beta_fast)));
    high = std::min(dims - 1, std::ceil(corr_dim(yarn.beta_slow)));
  }
  for (int64_t r = 0; r < rows; ++r) {
    const double pos = static_cast<double>(positions_start + r);
    float* cs = table + r * rot_dims;
    for (int64_t i = 0; i < half; ++i) {
      double angle = pos * std::pow(theta, -2.0 * static_cast<double>(i) / dims);
      double gain = 1;
      if (yarn.factor > 0) {
        const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
        const double ramp = 1.0 - std::min(1.0, std::max(0.0, y));  // 1: extrapolate (fast pairs), 0: interpolate
        angle = angle / yarn.factor * (1.0 - ramp) + angle * ramp;
        gain = yarn.gain;
      }
      cs[i] = static_cast<float>(std::cos(angle) * gain);
      cs[half + i] = static_cast<float>(std::sin(angle) * gain);
    }
  }
}

void ApplyRope(float* x, int64_t rows, int64_t row_stride, int64_t heads, int64_t head_stride,
               int64_t rot_dims, const float* table) {
  const int64_t half = rot_dims / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* cos = table + r * rot_dims;
    const float* sin = cos + half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + r * row_stride + h * head_stride;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[half + i];
        v[i] = a * cos[i] - b * sin[i];
        v[half + i] = a * sin[i] + b * cos[i];
      }
    }
  }
}

void ApplyRopeInterleaved(float* x, int64_t rows, int64_t row_stride, int64_t heads, int64_t head_stride,
                          int64_t rot_dims, const float* table) {
  const int64_t half = rot_dims / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* cos = table + r * rot_dims;
    const float* sin = cos + half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + r * row_stride + h * head_stride;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cos[i] - b * sin[i];
        v[2 * i + 1] = a * sin[i] + b * cos[i];
      }
    }
  }
}

}  // namespace lineage::engine
