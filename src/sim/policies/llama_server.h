// llama-server: slots plus a host-RAM prompt cache (docs/policies.md).
//
// A request takes the idle slot whose stored sequence shares the largest
// fraction of the new prompt (above `similarity`), else the least recently
// used idle slot. It has one slot per request the machine admits
// (--parallel), so a slot is always free at admission. A new task first moves every idle slot's state
// to the prompt cache (cache_idle_slots). When the slot came from LRU or keeps less than
// half its tokens, its state is saved to the prompt cache and the cache's
// best match is loaded if it restores more. Hybrid models restore at the
// slot's end or at one of its recurrent checkpoints (AddCheckpoints: user
// message starts at least `checkpoint_min_spacing` apart, the last user
// message, and n_ubatch + 4 and 4 tokens before each prompt end, at most
// `max_checkpoints` per slot); attention-only models restore any prefix and,
// with `cache_reuse_tokens` > 0 (--cache-reuse; 0 by default, as in
// common/common.h), shift later equal chunks into place.
#pragma once

#include <list>
#include <unordered_map>

#include "sim/policy.h"

namespace lineage::sim {

class LlamaServerPolicy final : public PeerPolicy {
 public:
  LlamaServerPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "llama-server"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;

  double similarity = 0.1;                    // --slot-prompt-similarity
  int64_t max_checkpoints = 32;               // --ctx-checkpoints
  int64_t checkpoint_min_spacing = 8192;      // --checkpoint-min-step
  int64_t checkpoint_tail_tokens = 4;
  int64_t ubatch_tokens = 512;                // --ubatch-size
  bool cache_idle_slots = true;               // --cache-idle-slots
  int64_t cache_reuse_tokens = 0;             // --cache-reuse (attention-only models only)
  Status status() const override { return status_; }

 private:
  struct State {
    std::vector<Segment> seq;         // tokens the state covers
    std::vector<int64_t> checkpoints;  // ascending positions (hybrid only)
    int64_t last_used_ms = 0;
    int64_t bytes(const ModelShape& s) const;
  };
  struct Slot {
    State state;
    bool busy = false;
  };
  // The slot for `q`; -1 when every slot is busy.
  int PickSlot(const Request& q, bool* by_similarity);
  void AddCheckpoints(const Request& q, int64_t restore, std::vector<int64_t>& cps) const;
  int64_t RestoreFrom(const State& s, const Request& q, int64_t* reused) const;
  int64_t ChunkReuse(const std::vector<Segment>& stored, const std::vector<Segment>& prompt, int64_t lcp) const;
  void SaveToCache(const State& s);
  void Recount();

  int num_slots_;                              // --parallel
  std::vector<Slot> slots_;
  Status status_;
  std::list<State> cache_;                       // front = most recently used
  std::unordered_map<int64_t, int> slot_of_;     // request index -> slot
  std::unordered_map<int64_t, int64_t> restore_of_;
};

}  // namespace lineage::sim
