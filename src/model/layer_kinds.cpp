#include "model/layer_kinds.h"

#include "model/config.h"

namespace lineage::model {
namespace {

int64_t NoRows(const ModelConfig&, int64_t) { return 0; }
int64_t NoState(const ModelConfig&) { return 0; }

// GDN and KDA: the conv window (K - 1 rows of the conv channels) and one
// d_k x d_v delta state per value head (spec §2.8, §7.2).
int64_t DeltaState(const ModelConfig& c) {
  return (c.conv_kernel - 1) * c.conv_dim() + c.lin_num_v_heads * c.lin_k_dim * c.lin_v_dim;
}

// K and V of every kv head.
int64_t AttentionRows(const ModelConfig& c, int64_t) { return 2 * c.num_kv_heads * c.head_dim; }

// The latent row [c_kv | k_pe].
int64_t LatentRows(const ModelConfig& c, int64_t) { return c.latent_dim(); }

// The latent row, and the indexer's key on a full layer.
int64_t SparseLatentRows(const ModelConfig& c, int64_t l) {
  return c.latent_dim() + (c.indexer_layer(l) ? c.indexer_dim : 0);
}

constexpr MixerKindInfo kMixers[] = {
    {"gated-deltanet", true, NoRows, DeltaState},
    {"kda", true, NoRows, DeltaState},
    {"attention", false, AttentionRows, NoState},
    {"latent-attention", false, LatentRows, NoState},
    {"sparse-latent-attention", false, SparseLatentRows, NoState},
};

constexpr FfnKindInfo kFfns[] = {{"dense"}, {"moe"}, {"deepseek-moe"}};

}  // namespace

const MixerKindInfo& Info(MixerKind k) { return kMixers[static_cast<int>(k)]; }
const FfnKindInfo& Info(FfnKind k) { return kFfns[static_cast<int>(k)]; }

}  // namespace lineage::model
