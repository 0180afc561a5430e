// ChunkReuse: `--cache-reuse N` for attention-only models (DESIGN.md §3.7),
// the way llama-server does it.
//
// After admission restored r tokens from a RAM entry, the rest of the prompt
// is walked against the rest of that entry's stored sequence
// (cache/chunk_match.h); every run of at least N equal tokens found at a later
// position of the stored sequence (the client deleted or shortened a message
// in the middle) has its KV rows appended at their new positions, K
// re-rotated by the position delta (engine/kv_shift.h). At most m - 1 tokens
// are restored in all: the last prompt token is always computed.
//
// It is an approximation, as in llama-server: a moved row was computed
// attending to what was deleted before it, so the logits differ from a cold
// prefill's. Off by default. A hybrid model's recurrent state cannot be
// spliced, so EngineBackend refuses it there.
//
// Ownership: borrows the cache, which must outlive it. Thread-safety: Apply
// runs on the scheduler thread (it writes the sequence); the cache is
// thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "cache/lineage_cache.h"
#include "engine/sequence.h"
#include "model/config.h"

namespace lineage::server {

class ChunkReuse {
 public:
  ChunkReuse(const model::ModelConfig& config, cache::LineageCache* cache, int64_t min_run_tokens)
      : config_(config), cache_(cache), min_run_tokens_(min_run_tokens) {}

  // Appends reused rows to `seq` (admitted from lookup.restore, so holding
  // prompt[0, seq.num_tokens())) and returns how many. Anything that stands
  // in the way (no RAM entry, entry gone, nothing long enough) reuses 0.
  int64_t Apply(std::span<const int32_t> prompt, const cache::LookupResult& lookup, engine::Sequence& seq) const;

 private:
  model::ModelConfig config_;
  cache::LineageCache* cache_;
  int64_t min_run_tokens_;
};

}  // namespace lineage::server
