// The dense feed-forward's plain reference.
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::dense_ffn {
namespace {

using namespace model;

Mat Run(const ModelConfig& c, const LayerWeights& w, const Mat& x, std::vector<std::vector<int64_t>>*) {
  return SwiGlu(c, w.gate_proj, w.up_proj, w.down_proj, x);
}

}  // namespace

extern const model::ReferenceFfn kReference{Run};

}  // namespace lineage::kinds::dense_ffn
