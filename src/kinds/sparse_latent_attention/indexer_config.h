// The lightning indexer's hyperparameters (spec latent-attention §1.2,
// §1.6, §1.8): the sparse latent attention kind's own part of a model's
// config (ModelConfig::indexer). The kind reads, writes, checks and
// fingerprints them itself (sparse_latent_attention_spec.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace lineage::model {

// Zero heads: dense latent attention. A layer with full[l] runs the indexer
// and caches its key; one without reuses the selection of the nearest full
// layer below it. Empty `full`: every latent layer is full.
struct IndexerConfig {
  int64_t heads = 0;         // Hi
  int64_t dim = 0;           // D (a power of two >= 64 where files rotate it)
  int64_t top_k = 0;         // K: keys each query attends to at most
  bool rope_neox = false;    // deepseek32 NEOX pairs, glm-dsa NORM (interleaved)
  double norm_eps = 0.0;     // the key LayerNorm's epsilon (glm-dsa 0, deepseek32 1e-6)
  std::vector<bool> full;
};

struct ModelConfig;

// The indexer conventions llama.cpp fixes per arch (spec latent-attention
// §1.8): deepseek32 ropes its indexer with NEOX pairs and normalises its key
// with epsilon 1e-6; glm-dsa (and kda-dsa) interleave and use 0, since
// llama.cpp never loads glm-dsa's epsilon. Both formats of a model use them.
void SetIndexerConventions(ModelConfig* c);

// True when latent layer l runs the indexer (and caches its key).
bool IndexerLayer(const ModelConfig& c, int64_t l);

// A model with an indexer attends sparsely on every trunk latent layer:
// its kLatent layers become kSparseLatent (the kind's refine_layers, which
// RefineLayers runs once the indexer's fields are read or stated).
void UseSparseLayers(ModelConfig* c);

}  // namespace lineage::model
