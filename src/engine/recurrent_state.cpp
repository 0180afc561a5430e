#include "engine/recurrent_state.h"

namespace lineage::engine {

RecurrentLayout RecurrentLayout::For(const model::ModelConfig& config) {
  RecurrentLayout l;
  l.num_layers = config.num_linear_layers();
  if (l.num_layers == 0) return l;
  l.conv_rows = config.conv_kernel - 1;
  l.conv_dim = config.conv_dim();
  l.num_v_heads = config.lin_num_v_heads;
  l.k_dim = config.lin_k_dim;
  l.v_dim = config.lin_v_dim;
  return l;
}

bool RecurrentState::SameLayout(const RecurrentLayout& o) const {
  return layout_.num_layers == o.num_layers && layout_.conv_rows == o.conv_rows &&
         layout_.conv_dim == o.conv_dim && layout_.num_v_heads == o.num_v_heads &&
         layout_.k_dim == o.k_dim && layout_.v_dim == o.v_dim;
}

}  // namespace lineage::engine
