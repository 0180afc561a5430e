#include "engine/speculation.h"

#include <algorithm>

namespace lineage::engine {

Result<SpecType> ParseSpecType(std::string_view name) {
  if (name == "none") return SpecType::kNone;
  if (name == "ngram-simple" || name == "ngram" || name == "prompt-lookup") return SpecType::kNgram;
  return InvalidArgument("unknown speculative decoding type '" + std::string(name) +
                         "' (none, ngram-simple)");
}

std::string_view SpecTypeName(SpecType type) {
  switch (type) {
    case SpecType::kNone: return "none";
    case SpecType::kNgram: return "ngram-simple";
  }
  return "none";
}

Speculator::Speculator(const SpecOptions& options) : options_(options), next_drafts_(options.draft_max) {}

std::vector<int32_t> Speculator::Propose(std::span<const int32_t> prompt, std::span<const int32_t> reply,
                                         int64_t limit) {
  if (!enabled()) return {};
  const int64_t want = std::min(limit, options_.adaptive ? next_drafts_ : options_.draft_max);
  if (want <= 0 || want < options_.draft_min) return {};
  std::vector<int32_t> drafts = PromptLookupDrafts(prompt, reply, want, options_.lookup);
  if (static_cast<int64_t>(drafts.size()) < std::max<int64_t>(1, options_.draft_min)) return {};
  return drafts;
}

void Speculator::Keep(Sequence& seq, int64_t start, int64_t rows_used, int64_t run_tokens) {
  const int64_t drafts = run_tokens - 1, taken = rows_used - 1;
  if (rows_used < run_tokens) {
    // The state after the last token and `taken` drafts was captured in slot `taken`.
    seq.Rewind(start + rows_used, &slots_[static_cast<size_t>(taken)]);
  }
  if (drafts <= 0) return;
  ++rounds_;
  proposed_ += drafts;
  accepted_ += taken;
  const int64_t floor = std::max<int64_t>(1, options_.draft_min);
  if (taken == drafts) next_drafts_ = std::min(options_.draft_max, next_drafts_ + 2);
  else next_drafts_ = std::max(floor, next_drafts_ - 1);
}

}  // namespace lineage::engine
