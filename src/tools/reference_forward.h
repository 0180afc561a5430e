// ReferenceForward: the plain forward pass of a model, written straight from
// spec/hybrid-qwen.md, used as the oracle for the optimized engine and for
// format equivalence tests.
//
// Double precision throughout, no SIMD, none of the shared kernels: weights
// are read with DecodeToFloat only. Gated DeltaNet runs the token-by-token
// recurrence (spec §2.5), attention is causal softmax over all previous
// positions (§3, §11), norms as in §4, the MoE FFN token by token (§4.3).
// Kimi Linear: the KDA recurrence (§7.2), MLA unabsorbed (every head's keys
// and values expanded from the latent, §7.3), the DeepSeek-V3 MoE (§7.4).
// glm-dsa / deepseek32 (spec latent-attention §1): the lightning indexer's
// every score and a stable sort per query, then MLA masked to the chosen
// keys (the dense form with a mask, as llama.cpp computes it).
// Slow by design: use tiny shapes.
// Thread-safe (reads the model only).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "model/weights.h"

namespace lineage::model {

struct ReferenceTrace {
  // RMS of the residual stream after layer l, the maximum over positions.
  std::vector<double> layer_rms;
  // MoE models: the experts each position chose, [layer][position][k] in
  // order of decreasing router probability.
  std::vector<std::vector<std::vector<int64_t>>> experts;
};

// Logits [T][V] of every position of `tokens`, starting from an empty state.
// InvalidArgument when a token id is outside the vocabulary.
Result<std::vector<std::vector<double>>> ReferenceForward(const Model& model,
                                                         const std::vector<int32_t>& tokens,
                                                         ReferenceTrace* trace = nullptr);

// The MTP block's first k greedy drafts after `tokens` (spec hybrid-qwen
// §5.2; its last token is the one sampled last): the trunk's final-normed
// states of tokens[0, n), the block's rows j = 0..n from (tokens[j],
// state j - 1; zeros for j = 0) at position j, causal attention over them;
// each draft's head-normed output and token form the next row. Logits
// [k][V] of each draft; InvalidArgument without an MTP block.
Result<std::vector<std::vector<double>>> ReferenceMtpDrafts(const Model& model, const std::vector<int32_t>& tokens,
                                                           int64_t k);

}  // namespace lineage::model
