#include "engine/prompt_lookup.h"

#include <algorithm>

namespace lineage::engine {
namespace {

// prompt ++ reply as one indexable sequence, without copying either.
class Joined {
 public:
  Joined(std::span<const int32_t> a, std::span<const int32_t> b) : a_(a), b_(b) {}
  int64_t size() const { return static_cast<int64_t>(a_.size() + b_.size()); }
  int32_t operator[](int64_t i) const {
    const int64_t na = static_cast<int64_t>(a_.size());
    return i < na ? a_[static_cast<size_t>(i)] : b_[static_cast<size_t>(i - na)];
  }

 private:
  std::span<const int32_t> a_, b_;
};

}  // namespace

std::vector<int32_t> PromptLookupDrafts(std::span<const int32_t> prompt, std::span<const int32_t> reply,
                                        int64_t max_drafts, const PromptLookupOptions& options) {
  std::vector<int32_t> drafts;
  const Joined seq(prompt, reply);
  const int64_t len = seq.size();
  if (max_drafts <= 0) return drafts;
  for (int64_t n = std::min(options.ngram_max, len - 1); n >= std::max<int64_t>(1, options.ngram_min); --n) {
    const int64_t tail = len - n;
    // The most recent earlier occurrence: scan backwards from just before the tail.
    for (int64_t j = tail - 1; j >= 0; --j) {
      int64_t k = 0;
      while (k < n && seq[j + k] == seq[tail + k]) ++k;
      if (k < n) continue;
      // Past the end the continuation reads the drafts themselves, so a
      // repeating run (a loop of period p) drafts max_drafts, not p.
      for (int64_t i = j + n; static_cast<int64_t>(drafts.size()) < max_drafts; ++i)
        drafts.push_back(i < len ? seq[i] : drafts[static_cast<size_t>(i - len)]);
      return drafts;
    }
  }
  return drafts;
}

}  // namespace lineage::engine
