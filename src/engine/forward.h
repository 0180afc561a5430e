// The forward pass over one batch (engine/batch.h), every architecture. It runs
// every segment's new tokens through all layers, appending them to the
// segment's sequence state (KV rows must already be reserved; the caller
// commits them), and writes the logits of each segment's last row to
// logits[s * vocab ..] when `logits` is not null.
#pragma once

#include "engine/layers.h"
#include "model/weights.h"

namespace lineage::engine {

void Forward(const model::Model& m, const StepContext& ctx, float* logits);

}  // namespace lineage::engine
