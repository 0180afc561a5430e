#include "engine/multi_gemm.h"

#include <array>

#include "core/gemm_multi.h"

namespace lineage::engine {

void MultiGemm(std::initializer_list<GemmOut> outs, const float* x, int64_t ldx, int64_t T, ThreadPool* pool) {
  std::array<kernels::GemmTarget, 8> targets;
  if (outs.size() > targets.size()) {  // not a layer's siblings: no need to share the pass
    for (const GemmOut& o : outs) kernels::GemmMulti(std::span(&(targets[0] = {o.w, o.y, o.ldy}), 1), x, ldx, T, pool);
    return;
  }
  size_t n = 0;
  for (const GemmOut& o : outs) targets[n++] = {o.w, o.y, o.ldy};
  kernels::GemmMulti(std::span(targets.data(), n), x, ldx, T, pool);
}

}  // namespace lineage::engine
