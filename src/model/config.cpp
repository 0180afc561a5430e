#include "model/config.h"

#include <algorithm>

namespace lineage::model {

int64_t ModelConfig::num_full_layers() const {
  return std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::kFullAttention);
}

int64_t ModelConfig::num_linear_layers() const {
  return std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::kLinearAttention);
}

const char* ArchName(Arch a) {
  switch (a) {
    case Arch::kQwen3_5: return "qwen3_5";
    case Arch::kQwen3: return "qwen3";
    case Arch::kQwen3_5Moe: return "qwen3_5_moe";
    case Arch::kQwen3Next: return "qwen3_next";
  }
  return "?";
}

}  // namespace lineage::model
