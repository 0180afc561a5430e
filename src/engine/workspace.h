// Workspace: the activation buffers of one forward step, sized for the rows
// of the largest step seen and reused across steps so the hot path does not
// allocate. Owned by the Engine; one step at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/config.h"

namespace lineage::engine {

struct Workspace {
  // Row-major activations, [rows, width] each.
  std::vector<float> x;      // residual stream [R, H]
  std::vector<float> xn;     // normed input [R, H]
  std::vector<float> out;    // mixer / FFN output [R, H]
  std::vector<float> wide0;  // [R, max(conv_dim, 2 n_h hd, I)]
  std::vector<float> wide1;  // [R, max(conv_dim, n_h hd, I)]
  std::vector<float> mid0;   // [R, max(H_v d_v, n_h hd)]
  std::vector<float> mid1;   // [R, max(H_v d_v, n_h hd)]
  std::vector<float> kv0;    // [R, n_kv hd]
  std::vector<float> kv1;    // [R, n_kv hd]
  std::vector<float> heads0; // [R, H_v]
  std::vector<float> heads1; // [R, H_v]
  std::vector<float> rope;   // [R, rope_dims] cos | sin per row
  int64_t rows = 0;

  void Ensure(const model::ModelConfig& c, int64_t num_rows) {
    if (num_rows <= rows) return;
    rows = num_rows;
    const int64_t attn_q = c.num_heads * c.head_dim;
    const int64_t value_dim = c.lin_num_v_heads * c.lin_v_dim;
    const int64_t wide = std::max({c.conv_dim(), 2 * attn_q, c.intermediate});
    const int64_t mid = std::max(value_dim, attn_q);
    auto grow = [&](std::vector<float>& v, int64_t width) { v.assign(static_cast<size_t>(rows * width), 0.0f); };
    grow(x, c.hidden);
    grow(xn, c.hidden);
    grow(out, c.hidden);
    grow(wide0, wide);
    grow(wide1, wide);
    grow(mid0, mid);
    grow(mid1, mid);
    grow(kv0, c.num_kv_heads * c.head_dim);
    grow(kv1, c.num_kv_heads * c.head_dim);
    grow(heads0, std::max<int64_t>(c.lin_num_v_heads, 1));
    grow(heads1, std::max<int64_t>(c.lin_num_v_heads, 1));
    grow(rope, std::max<int64_t>(c.rope_dims, 1));
  }
};

}  // namespace lineage::engine
