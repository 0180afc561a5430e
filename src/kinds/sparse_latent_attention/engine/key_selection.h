// KeySelection: which cached keys each row of a batch attends to in sparse
// latent attention (lightning_indexer.h writes it, mla_layer.cpp reads it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lineage::engine {

// The keys each row of a batch attends to: row r's are keys[r * top_k ..
// r * top_k + count[r]), ascending positions of its own sequence.
struct KeySelection {
  int64_t top_k = 0;
  std::vector<int32_t> keys;   // [R, top_k]
  std::vector<int32_t> count;  // [R]
  void Reset(int64_t rows, int64_t k) {
    top_k = k;
    keys.resize(static_cast<size_t>(rows * k));
    count.assign(static_cast<size_t>(rows), 0);
  }
};

}  // namespace lineage::engine
