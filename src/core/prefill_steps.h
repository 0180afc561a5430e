// How a prompt is cut into prefill steps: the engine's prefill, the server's
// scheduler and the simulator's machine all cut it this way.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lineage {

// Where a prefill step from `pos` ends, toward `end`, with steps of `chunk`
// tokens. A remainder under a quarter of a chunk joins the step before it:
// every step reads every weight once (and the quantized GEMM repacks them),
// so a short last step cost a warm turn as much as half a full one (12-layer
// Q8_0 model: 30 tokens 120 ms, 256 tokens 220 ms).
inline int64_t PrefillStepEnd(int64_t pos, int64_t end, int64_t chunk) {
  const int64_t stop = std::min(end, pos + std::max<int64_t>(1, chunk));
  return end - stop < chunk / 4 ? end : stop;
}

}  // namespace lineage
