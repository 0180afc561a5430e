// RecurrentState: the fixed-size state of every Gated DeltaNet layer of one
// sequence at one length, in fp32 (spec §2.2, §2.5, §2.8):
//   conv window  [K-1, conv_dim]   the last K-1 raw (pre-conv) qkv rows,
//                                  oldest first; zeros before the start
//   delta state  [H_v, d_k, d_v]   S of every value head
// stored back to back per layer in one owned array. Attention layers hold
// nothing here. Implements cache::RecurrentBlob so the cache can charge its
// bytes; a snapshot copies it (it is small: ~19 MiB for Qwen3.5-0.8B).
//
// Thread-safety: a RecurrentState being run is owned by one sequence; a
// published copy (shared_ptr<const>) is immutable.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/payload.h"
#include "model/config.h"

namespace lineage::engine {

struct RecurrentLayout {
  int64_t num_layers = 0;   // GDN layers
  int64_t conv_rows = 0;    // K-1
  int64_t conv_dim = 0;
  int64_t num_v_heads = 0;  // H_v
  int64_t k_dim = 0;        // d_k
  int64_t v_dim = 0;        // d_v

  static RecurrentLayout For(const model::ModelConfig& config);
  int64_t conv_floats() const { return conv_rows * conv_dim; }
  int64_t delta_floats() const { return num_v_heads * k_dim * v_dim; }
  int64_t layer_floats() const { return conv_floats() + delta_floats(); }
  int64_t total_floats() const { return num_layers * layer_floats(); }
};

class RecurrentState final : public cache::RecurrentBlob {
 public:
  explicit RecurrentState(const RecurrentLayout& layout)
      : layout_(layout), data_(static_cast<size_t>(layout.total_floats()), 0.0f) {}

  int64_t bytes() const override { return static_cast<int64_t>(data_.size()) * 4; }
  const RecurrentLayout& layout() const { return layout_; }

  // `index` counts GDN layers only (0 .. num_layers-1).
  float* conv(int64_t index) { return data_.data() + index * layout_.layer_floats(); }
  float* delta(int64_t index) { return conv(index) + layout_.conv_floats(); }
  const float* conv(int64_t index) const { return data_.data() + index * layout_.layer_floats(); }
  const float* delta(int64_t index) const { return conv(index) + layout_.conv_floats(); }

  bool SameLayout(const RecurrentLayout& other) const;

 private:
  RecurrentLayout layout_;
  std::vector<float> data_;
};

}  // namespace lineage::engine
