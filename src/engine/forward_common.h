// The pre-norm residual step every layer of both architectures is made of:
//   x += block(rmsnorm(x) * norm)
// over all rows of the batch (x = ws.x, the normed rows go to ws.xn, the
// block writes ws.out).
#pragma once

#include <vector>

#include "core/kernels.h"
#include "engine/layers.h"

namespace lineage::engine {

template <typename Block>
void PreNormResidual(const std::vector<float>& norm, const StepContext& ctx, Block&& block) {
  const int64_t R = ctx.batch.num_rows, H = ctx.config.hidden;
  float* x = ctx.ws.x.data();
  kernels::RmsNorm(x, norm.data(), static_cast<float>(ctx.config.rms_eps), R, H, ctx.ws.xn.data());
  block(ctx.ws.xn.data(), ctx.ws.out.data());
  kernels::Add(x, ctx.ws.out.data(), x, R * H);
}

}  // namespace lineage::engine
