// Prompt lookup: drafts for speculative decoding taken from the sequence
// itself. The last n tokens of prompt + reply (n from ngram_max down to
// ngram_min) are looked for earlier in the same tokens; the tokens that
// followed their most recent earlier occurrence are the drafts. Coding
// agents re-emit file contents, diffs and tool arguments they have seen, so
// this costs one scan and often pays; on text with no repeat it proposes
// nothing, and a step with no drafts is a plain decode step.
//
// Stateless; O(context x ngram_max) per call worst case (a 60k-token context
// scans in well under a millisecond, a fraction of a decode step).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace lineage::engine {

struct PromptLookupOptions {
  int64_t ngram_min = 2;
  int64_t ngram_max = 4;
};

// Up to `max_drafts` tokens to follow prompt ++ reply; empty when the tail
// occurs nowhere earlier.
std::vector<int32_t> PromptLookupDrafts(std::span<const int32_t> prompt, std::span<const int32_t> reply,
                                        int64_t max_drafts, const PromptLookupOptions& options = {});

}  // namespace lineage::engine
