#include "cache/capture_plan.h"

#include <algorithm>

namespace lineage::cache {

namespace {

int Priority(PointKind kind) {
  switch (kind) {
    case PointKind::kAnchor: return 0;
    case PointKind::kDivergence: return 1;
    case PointKind::kHistoryEnd: return 2;
    case PointKind::kGuard: return 3;
    default: return 4;
  }
}

}  // namespace

int64_t StructuralSpacing(const CacheOptions& o) {
  int64_t spacing = std::max<int64_t>(o.divergence_min_gain_tokens, 1);
  if (o.state_bytes > 0 && o.kv_bytes_per_token > 0) spacing = std::max(spacing, o.state_bytes / o.kv_bytes_per_token);
  return spacing;
}

int64_t RungSpacing(const CacheOptions& o) {
  int64_t step = 1;
  while (step < StructuralSpacing(o)) step *= 2;
  return step;
}

std::vector<int64_t> StructuralPoints(int64_t m, int64_t r, const CacheOptions& o) {
  const int64_t block = o.structural_block_tokens;
  std::vector<int64_t> out;
  if (block <= 0) return out;
  const int64_t spacing = StructuralSpacing(o);
  // The last boundary below m, then boundaries 1, 3, 7, 15 ... blocks below it.
  const int64_t top = (m - 1) / block * block;
  int64_t last = -1;
  for (int64_t below = 0; below <= top; below = 2 * below + block) {
    const int64_t n = top - below;
    if (n - r < o.divergence_min_gain_tokens || n <= 0) break;
    // The boundary next to the end is kept whatever its spacing: the next
    // turn leaves the prompt there. So is the one below it for a cold
    // prompt: a question after a document no stored sequence shares leaves
    // it in one of the two. A prompt restored at r already knows where it
    // parts from what is stored; there a second state near the end costs a
    // state and saves a block.
    if (below == 0 || (below <= block && r == 0) || last - n >= spacing) {
      out.push_back(n);
      last = n;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<PlannedCapture> PlanCaptures(const PlanInputs& in, const CacheOptions& o) {
  const int64_t m = in.prompt_tokens;
  const int64_t r = in.restore_tokens;
  std::vector<PlannedCapture> plan;
  auto add = [&](int64_t n, PointKind kind) {
    if (n > r && n <= m && n > 0) plan.push_back({n, kind});
  };
  const int64_t guard_n = m - o.guard_tokens;
  if (o.mode == CacheMode::kExact) {
    add(guard_n, PointKind::kGuard);
    return plan;
  }
  if (o.capture_anchor && in.anchor_tokens > 0 && !in.anchor_exists) {
    add(in.anchor_tokens, PointKind::kAnchor);
    if (o.recurrent && o.anchor_rungs) {
      const int64_t step = RungSpacing(o);
      for (int64_t n = (r / step + 1) * step; n + o.divergence_min_gain_tokens <= in.anchor_tokens; n += step)
        if (n - r >= o.divergence_min_gain_tokens) add(n, PointKind::kPeriodic);
    }
  }
  if (o.capture_anchor && o.capture_system_end && in.system_end_tokens >= o.divergence_min_gain_tokens &&
      !in.system_end_exists)
    add(in.system_end_tokens, PointKind::kAnchor);
  if (o.recurrent) {
    // The next session may leave one or two tokens earlier (BPE merges at
    // the boundary): the anchor's slack rule.
    const int64_t d = BeforeBoundary(in.closest_shared_tokens);
    if (in.closest_shared_tokens < m && d - r >= o.divergence_min_gain_tokens) add(d, PointKind::kDivergence);
    if (o.capture_history_end && in.history_end_tokens < m) add(in.history_end_tokens, PointKind::kHistoryEnd);
    const std::vector<int64_t> structural = in.structural ? StructuralPoints(m, r, o) : std::vector<int64_t>{};
    // A guard serves an exact resend. Less than a state's worth of tokens
    // (StructuralSpacing) above a structural point it saves fewer tokens
    // than its bytes would hold as KV: the resend restores at that point.
    const bool guard_pays = structural.empty() || guard_n - structural.back() >= StructuralSpacing(o);
    if (m - r >= o.guard_min_suffix_tokens && guard_pays) add(guard_n, PointKind::kGuard);
    for (int64_t n : structural) add(n, PointKind::kPeriodic);
    if (o.periodic_tokens > 0) {
      for (int64_t n = (r / o.periodic_tokens + 1) * o.periodic_tokens; n < m; n += o.periodic_tokens) {
        add(n, PointKind::kPeriodic);
      }
    }
  }
  std::stable_sort(plan.begin(), plan.end(), [](const PlannedCapture& a, const PlannedCapture& b) {
    return a.n != b.n ? a.n < b.n : Priority(a.kind) < Priority(b.kind);
  });
  plan.erase(std::unique(plan.begin(), plan.end(),
                         [](const PlannedCapture& a, const PlannedCapture& b) { return a.n == b.n; }),
             plan.end());
  return plan;
}

}  // namespace lineage::cache
