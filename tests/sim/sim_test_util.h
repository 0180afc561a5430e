// Helpers shared by the simulator tests: hand-built requests.
#pragma once

#include <vector>

#include "sim/shapes.h"
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

// glm-5.3-flash's bytes at round speeds: 100 prefill tokens a second (a
// 256-token chunk takes 2,560 ms), 10 ms a decode step.
inline ModelShape TestShape() {
  ModelShape s = FindShape("glm-5.3-flash").value();
  s.prefill_tokens_per_s = 100;
  s.decode_s_per_token = 0.01;
  return s;
}

}  // namespace lineage::sim::testing
