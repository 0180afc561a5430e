// RecurrentState: the fixed-size state of every Gated DeltaNet layer of one
// sequence at one length, in fp32 (spec §2.2, §2.5, §2.8):
//   conv window  [K-1, conv_dim]   the last K-1 raw (pre-conv) qkv rows,
//                                  oldest first; zeros before the start
//   delta state  [H_v, d_k, d_v]   S of every value head
// stored back to back per layer in one owned array. Attention layers hold
// nothing here. Implements cache::RecurrentBlob so the cache can charge its
// bytes; a snapshot copies it (it is small: ~19 MiB for Qwen3.5-0.8B).
//
// Memory: a copy is the admission of every warm turn, so it must cost the
// copy and nothing else. Large states live in whole pages that are filled
// before use (no page fault per 4 KiB inside the copy) and, when a state is
// freed, a few of them are kept for the next state of the same size
// (state_buffers.cpp). The kept buffers are the process's, not the cache's:
// at most kMaxKeptBuffers of them.
//
// Thread-safety: a RecurrentState being run is owned by one sequence; a
// published copy (shared_ptr<const>) is immutable. Construction and
// destruction may happen on any thread.
#pragma once

#include <cstdint>

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
  // All zeros: the state before the first token.
  explicit RecurrentState(const RecurrentLayout& layout);
  // One copy of `other`'s values.
  RecurrentState(const RecurrentState& other);
  RecurrentState& operator=(const RecurrentState&) = delete;
  ~RecurrentState() override;

  int64_t bytes() const override { return num_floats_ * 4; }
  const RecurrentLayout& layout() const { return layout_; }

  // `index` counts GDN layers only (0 .. num_layers-1).
  float* conv(int64_t index) { return data_ + index * layout_.layer_floats(); }
  float* delta(int64_t index) { return conv(index) + layout_.conv_floats(); }
  const float* conv(int64_t index) const { return data_ + index * layout_.layer_floats(); }
  const float* delta(int64_t index) const { return conv(index) + layout_.conv_floats(); }

  bool SameLayout(const RecurrentLayout& other) const;

  // Every value, layout().total_floats() of them, layer after layer: what a
  // disk tier writes and reads back.
  const float* data() const { return data_; }
  float* mutable_data() { return data_; }

 private:
  RecurrentLayout layout_;
  int64_t num_floats_ = 0;
  float* data_ = nullptr;  // owned: num_floats_ floats from state_buffers.h
};

}  // namespace lineage::engine
