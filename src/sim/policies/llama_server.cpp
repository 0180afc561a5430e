#include "sim/policies/llama_server.h"

#include <algorithm>

#include "cache/chunk_match.h"

namespace lineage::sim {

LlamaServerPolicy::LlamaServerPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options), num_slots_(std::max(1, options.parallel)), slots_(static_cast<size_t>(num_slots_)) {}

int64_t LlamaServerPolicy::State::bytes(const ModelShape& s) const {
  if (seq.empty()) return 0;
  return s.SnapshotBytes(NumTokens(seq)) + static_cast<int64_t>(checkpoints.size()) * s.recurrent_bytes;
}

int LlamaServerPolicy::PickSlot(const Request& q, bool* by_similarity) {
  int best = -1;
  double best_sim = similarity;
  for (int i = 0; i < num_slots_; ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    if (s.busy || s.state.seq.empty()) continue;
    double sim = static_cast<double>(Lcp(s.state.seq, q.prompt)) / static_cast<double>(q.num_prompt_tokens);
    if (sim > best_sim) {
      best_sim = sim;
      best = i;
    }
  }
  *by_similarity = best >= 0;
  if (best >= 0) return best;
  // The least recently used idle slot; none when every slot is busy (the
  // task is deferred until one is released).
  for (int i = 0; i < num_slots_; ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    if (s.busy) continue;
    if (best < 0 || s.state.last_used_ms < slots_[static_cast<size_t>(best)].state.last_used_ms) best = i;
  }
  return best;
}

// Tokens after the common prefix that reappear later in the stored sequence
// in runs of at least cache_reuse_tokens (whole segments), shifted into place.
int64_t LlamaServerPolicy::ChunkReuse(const std::vector<Segment>& stored, const std::vector<Segment>& prompt,
                                      int64_t lcp) const {
  size_t hc = 0, hp = 0;
  for (int64_t t = 0; hc < stored.size() && t + stored[hc].num_tokens <= lcp; ++hc) t += stored[hc].num_tokens;
  for (int64_t t = 0; hp < prompt.size() && t + prompt[hp].num_tokens <= lcp; ++hp) t += prompt[hp].num_tokens;
  if (hp < prompt.size() && NumTokens(std::span(prompt).first(hp)) != lcp) ++hp;  // skip a partly matched segment
  const auto cached_tail = std::span(stored).subspan(hc), prompt_tail = std::span(prompt).subspan(hp);
  const std::vector<cache::ReusedChunk> chunks = cache::MatchChunks(
      prompt_tail, cached_tail, cache_reuse_tokens,
      [](const Segment& a, const Segment& b) { return a.id == b.id && a.num_tokens == b.num_tokens; },
      [](const Segment& s) { return static_cast<int64_t>(s.num_tokens); });
  int64_t reused = 0;
  for (const cache::ReusedChunk& c : chunks) reused += NumTokens(prompt_tail.subspan(c.dst, c.len));
  return reused;
}

int64_t LlamaServerPolicy::RestoreFrom(const State& s, const Request& q, int64_t* reused) const {
  *reused = 0;
  if (s.seq.empty()) return 0;
  const int64_t m = q.num_prompt_tokens, len = NumTokens(s.seq);
  int64_t lcp = Lcp(s.seq, q.prompt);
  int64_t n_past = std::min(lcp, m - 1);
  if (shape_.attention_only()) {
    if (cache_reuse_tokens > 0) *reused = std::min(ChunkReuse(s.seq, q.prompt, lcp), m - 1 - n_past);
    return n_past;
  }
  if (lcp == len && len < m) return len;
  int64_t point = 0;
  for (int64_t c : s.checkpoints)
    if (c <= n_past) point = c;
  return point;
}

void LlamaServerPolicy::SaveToCache(const State& s) {
  if (s.seq.empty()) return;
  cache_.remove_if([&](const State& c) { return c.seq.size() == s.seq.size() && Lcp(c.seq, s.seq) == NumTokens(s.seq); });
  cache_.push_front(s);
  Recount();
}

Admission LlamaServerPolicy::Admit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  // A new task first saves every idle slot to the prompt cache and clears it
  // (--cache-idle-slots with the unified KV cache of automatic --parallel):
  // what idle slots held is then charged to the cache like any saved state.
  if (cache_idle_slots) {
    for (Slot& s : slots_) {
      if (s.busy || s.state.seq.empty()) continue;
      SaveToCache(s.state);
      s.state = State{};
    }
  }
  bool by_similarity = false;
  int idx = PickSlot(q, &by_similarity);
  Admission a;
  if (idx < 0) {
    if (status_.ok()) status_ = Internal("llama-server: no idle slot for request " + std::to_string(r.index));
    return a;
  }
  Slot& slot = slots_[static_cast<size_t>(idx)];
  int64_t reused = 0;
  int64_t restore = RestoreFrom(slot.state, q, &reused);
  int64_t len = NumTokens(slot.state.seq);
  double f_keep = len > 0 ? static_cast<double>(Lcp(slot.state.seq, q.prompt)) / static_cast<double>(len) : 0.0;
  if (!by_similarity || f_keep < 0.5) {
    SaveToCache(slot.state);
    auto best = cache_.end();
    int64_t best_restore = restore + reused, best_reused = 0;
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      int64_t rr = 0, rp = RestoreFrom(*it, q, &rr);
      if (rp + rr > best_restore) {
        best = it;
        best_restore = rp + rr;
        best_reused = rr;
      }
    }
    if (best != cache_.end()) {
      slot.state = *best;
      a.ram_copy_bytes = best->bytes(shape_);
      restore = best_restore - best_reused;
      reused = best_reused;
      best->last_used_ms = now_ms;
      cache_.splice(cache_.begin(), cache_, best);
    }
  }
  // The slot now holds the prompt up to the restore point; later checkpoints are gone.
  std::erase_if(slot.state.checkpoints, [&](int64_t c) { return c > restore; });
  slot.busy = true;
  slot.state.last_used_ms = now_ms;
  slot_of_[r.index] = idx;
  restore_of_[r.index] = restore;
  a.restore_tokens = restore + reused;
  Recount();
  return a;
}

// Checkpoints taken while prefilling prompt[restore, m), each the state
// before a batch: at the start of a user message when it is the last user
// message, the slot's first checkpoint, or more than checkpoint_min_spacing
// past the previous one; and n_ubatch + 4 and 4 tokens before the prompt end
// (the server ends batches there so that a checkpoint can be taken).
void LlamaServerPolicy::AddCheckpoints(const Request& q, int64_t restore, std::vector<int64_t>& cps) const {
  const int64_t m = q.num_prompt_tokens;
  std::vector<int64_t> user_starts;
  int64_t at = 0;
  for (size_t i = 0; i < q.prompt.size(); ++i) {
    if (q.prompt[i].role == Role::kUser && (i == 0 || q.prompt[i - 1].role != Role::kUser)) user_starts.push_back(at);
    at += q.prompt[i].num_tokens;
  }
  const int64_t last_user = user_starts.empty() ? -1 : user_starts.back();
  std::vector<std::pair<int64_t, bool>> candidates;  // (position, taken whatever the spacing)
  for (int64_t u : user_starts) candidates.push_back({u, u == last_user});
  for (int64_t tail : {m - checkpoint_tail_tokens - ubatch_tokens, m - checkpoint_tail_tokens}) candidates.push_back({tail, true});
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [c, always] : candidates) {
    if (c <= restore || c <= 0 || c >= m) continue;
    if (!cps.empty() && c <= cps.back()) continue;
    if (!always && !cps.empty() && c <= cps.back() + checkpoint_min_spacing) continue;
    cps.push_back(c);
    if (static_cast<int64_t>(cps.size()) > max_checkpoints) cps.erase(cps.begin());
  }
}

void LlamaServerPolicy::Commit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  Slot& slot = slots_[static_cast<size_t>(slot_of_[r.index])];
  int64_t restore = restore_of_[r.index];
  restore_of_.erase(r.index);
  slot.state.seq = q.prompt;
  slot.state.last_used_ms = now_ms;
  if (!shape_.attention_only()) AddCheckpoints(q, restore, slot.state.checkpoints);
  Recount();
}

void LlamaServerPolicy::Finish(const RequestView& r, int64_t now_ms) {
  Slot& slot = slots_[static_cast<size_t>(slot_of_[r.index])];
  slot_of_.erase(r.index);
  slot.state.seq = PromptAndOutput(*r.request);
  slot.state.last_used_ms = now_ms;
  slot.busy = false;
  Recount();
}

// The budget is the host-RAM prompt cache (--cache-ram). Slots are the
// server's working contexts, allocated up front; like every policy's running
// sequences they are not charged. Oldest cached states leave first.
void LlamaServerPolicy::Recount() {
  int64_t total = 0;
  for (const State& c : cache_) total += c.bytes(shape_);
  while (total > options_.ram_budget_bytes && !cache_.empty()) {
    total -= cache_.back().bytes(shape_);
    cache_.pop_back();
    ++counters_.evictions;
  }
  ChargeRam(counters_, total - counters_.ram_bytes);
}

}  // namespace lineage::sim
