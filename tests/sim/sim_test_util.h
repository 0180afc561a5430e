// Helpers shared by the simulator tests: hand-built requests.
#pragma once

#include <vector>

#include "sim/trace.h"

namespace lineage::sim::testing {

inline Request MakeRequest(int64_t t_ms, std::vector<Segment> prompt, uint64_t out_id, uint32_t out_len = 0,
                           int64_t anchor_tokens = 0) {
  Request r;
  r.arrival_ms = t_ms;
  r.prompt = std::move(prompt);
  r.num_prompt_tokens = NumTokens(r.prompt);
  r.output = {out_id, out_len, Role::kAssistant};
  r.anchor_tokens = anchor_tokens;
  return r;
}

}  // namespace lineage::sim::testing
