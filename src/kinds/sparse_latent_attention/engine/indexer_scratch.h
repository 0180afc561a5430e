// The lightning indexer's scratch (lightning_indexer.cpp) for R rows, and
// the selection it leaves for the shared layers above a full one; part of
// the latent mixers' workspace (engine/workspace.h), sized by the kind.
#pragma once

#include <cstdint>
#include <vector>

#include "kinds/sparse_latent_attention/engine/key_selection.h"
#include "model/config.h"

namespace lineage::engine {

struct IndexerScratch {
  std::vector<float> q;       // [R, Hi D] indexer queries
  std::vector<float> k;       // [R, D] indexer keys
  std::vector<float> w;       // [R, Hi] indexer head weights
  std::vector<float> scores;  // [rows, keys] of one block of rows, grown on demand
  KeySelection selection;     // the last full sparse layer's, for the shared layers above it

  void Ensure(const model::ModelConfig& c, int64_t rows) {
    auto grow = [&](std::vector<float>& v, int64_t width) { v.assign(static_cast<size_t>(rows * width), 0.0f); };
    grow(q, c.indexer.heads * c.indexer.dim);
    grow(k, c.indexer.dim);
    grow(w, c.indexer.heads);
  }
};

}  // namespace lineage::engine
