#include "engine/rope.h"

#include <cmath>

namespace lineage::engine {

void RopeTable(int64_t positions_start, int64_t rows, int64_t rot_dims, double theta, float* table) {
  const int64_t half = rot_dims / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const double pos = static_cast<double>(positions_start + r);
    float* cs = table + r * rot_dims;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = pos * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rot_dims));
      cs[i] = static_cast<float>(std::cos(angle));
      cs[half + i] = static_cast<float>(std::sin(angle));
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
