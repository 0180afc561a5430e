#include "engine/recurrent_state.h"

#include <cstring>

#include "engine/state_buffers.h"

namespace lineage::engine {

RecurrentLayout RecurrentLayout::For(const model::ModelConfig& config) {
  RecurrentLayout l;
  l.num_layers = config.num_linear_layers();
  if (l.num_layers == 0) return l;
  l.conv_rows = config.delta.conv_kernel - 1;
  l.conv_dim = config.delta.conv_dim();
  l.num_v_heads = config.delta.v_heads;
  l.k_dim = config.delta.k_dim;
  l.v_dim = config.delta.v_dim;
  return l;
}

RecurrentState::RecurrentState(const RecurrentLayout& layout)
    : layout_(layout), num_floats_(layout.total_floats()), data_(AcquireStateBuffer(num_floats_)) {
  std::memset(data_, 0, static_cast<size_t>(num_floats_) * 4);
}

RecurrentState::RecurrentState(const RecurrentState& other)
    : cache::RecurrentBlob(), layout_(other.layout_), num_floats_(other.num_floats_),
      data_(AcquireStateBuffer(num_floats_)) {
  std::memcpy(data_, other.data_, static_cast<size_t>(num_floats_) * 4);
}

RecurrentState::~RecurrentState() { ReleaseStateBuffer(data_, num_floats_); }

bool RecurrentState::SameLayout(const RecurrentLayout& o) const {
  return layout_.num_layers == o.num_layers && layout_.conv_rows == o.conv_rows &&
         layout_.conv_dim == o.conv_dim && layout_.num_v_heads == o.num_v_heads &&
         layout_.k_dim == o.k_dim && layout_.v_dim == o.v_dim;
}

}  // namespace lineage::engine
