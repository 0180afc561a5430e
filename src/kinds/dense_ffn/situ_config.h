// The SwiGLU activation's K3 form (spec latent-attention §2.4): every FFN
// of Kimi K3, dense or expert, activates with SiTU(g, u) instead of silu(g)
// u (ModelConfig::situ). dense_ffn_spec.cpp reads, writes, checks and
// fingerprints it.
#pragma once

namespace lineage::model {

struct SituConfig {
  double beta = 0;         // > 0: SiTU; 0: silu(g) u
  double linear_beta = 0;  // the u factor lambda tanh(u / lambda); <= 0: u
};

}  // namespace lineage::model
