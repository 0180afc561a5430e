// Rotary position embedding over the first `rot_dims` dims of each head; the
// rest pass through (spec §3: Qwen3.5 rotates 64 of 256, Qwen3 all of them).
// NeoX pairing ("rotate_half"): pairs (i, i + rot_dims/2); interleaved
// ("NORM", latent attention of glm-dsa / deepseek32): pairs (2i, 2i + 1).
// Pair i turns by pos * theta^(-2i/rot_dims) either way; angles are computed
// in double so large positions lose no precision.
#pragma once

#include <cstdint>

#include "model/config.h"

namespace lineage::engine {

// YaRN (as ggml's rope_yarn, spec latent-attention §1.5): pair i turns by
// pos theta^(-2i/dims) (1 - ramp_i (1 - 1/factor)), ramp_i falling from 1 to
// 0 between the pairs that rotate beta_fast and beta_slow times over
// original_context positions; cos and sin are multiplied by `gain`.
struct Yarn {
  double factor = 0;  // 0: no scaling
  int64_t original_context = 0;
  double beta_fast = 32, beta_slow = 1;
  double gain = 1;
};
// The YaRN of latent attention's rotary dims from a model's config (factor 0
// when it has none): its gain (1 + 0.1 ln s) / (1 + 0.1 mscale_all_dim ln s).
Yarn LatentYarn(const model::ModelConfig& c);

// table[r, 0 .. rot_dims/2) = cos, table[r, rot_dims/2 .. rot_dims) = sin of
// the angles of position positions_start + r, for r < rows.
void RopeTable(int64_t positions_start, int64_t rows, int64_t rot_dims, double theta, float* table,
               const Yarn& yarn = {});

// Rotates `heads` heads of each of `rows` rows in place. Row r of x starts at
// x + r * row_stride; head h of it at + h * head_stride. table as above.
void ApplyRope(float* x, int64_t rows, int64_t row_stride, int64_t heads, int64_t head_stride,
               int64_t rot_dims, const float* table);
// The same with interleaved pairs.
void ApplyRopeInterleaved(float* x, int64_t rows, int64_t row_stride, int64_t heads, int64_t head_stride,
                          int64_t rot_dims, const float* table);

}  // namespace lineage::engine
