// TraceSegmenter: turns the token ids of logged requests into the segments
// of the simulator's trace format (docs/traces.md, "How the server cuts
// prompts") so that the replayed longest common prefix of any two logged
// sequences equals the real one.
//
// A segment's synthetic tokens derive from its id alone, so two prompts match
// in replay only as far as they list the same segments. The segmenter makes
// that happen:
//   - a segment ending at L gets the id P(L), a hash of the real tokens
//     [0, L) that does not depend on where the segment starts: P(L) =
//     XXH64(tokens[b, L), seed = G(b)) with b the grid point below L and G
//     the chain over the fixed kBlockTokens grid. So any cut can be added
//     without changing any other id.
//   - every segment written (and every reply) is remembered as a
//     *continuation* of the prefix it starts at: key P(start), its id and its
//     real tokens. A later prompt that reaches the same prefix and shares k
//     >= 1 tokens of a remembered continuation writes (that id, k), the
//     format's "shorter segment with the same id is a prefix", and goes on
//     from there. This covers a previous prompt's partial last block, a
//     thinking template's divergence a few tokens before the previous end,
//     a reply repeated in the next prompt, and any mid-block divergence.
//   - otherwise the prompt is cut at the grid, its own anchor (cut_points)
//     and its end.
// Invariant (while nothing is forgotten): the continuations remembered at one
// key differ in their first real token, except replies, which are written
// with their own id whatever they share with an earlier reply.
//
// Memory is bounded: continuations live in two generations of at most
// memory_tokens tokens each (0: nothing is remembered); when the current one
// fills, it becomes the old one and the previous old one is dropped; a
// continuation found in the old generation is copied into the current one.
// Prompts whose continuations were dropped still share every whole grid
// block below their common prefix (at most kBlockTokens tokens short of it),
// except after a borrowed reply segment.
//
// Not thread-safe: TraceLog calls it under its lock.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace lineage::trace {

struct TraceSegment {
  uint64_t id = 0;          // below 2^63, so every JSON reader takes it as an integer
  int64_t num_tokens = 0;
};

struct SegmentedRequest {
  std::vector<TraceSegment> prompt;  // lengths sum to the prompt's length
  TraceSegment output;               // the reply as one segment
};

class TraceSegmenter {
 public:
  static constexpr int64_t kBlockTokens = 64;
  static constexpr int64_t kDefaultMemoryTokens = int64_t{1} << 21;  // per generation: ~8 MB of ids

  static constexpr uint64_t kDefaultSalt = 0x6c696e6561676531ull;

  // `salt` is G(0). Ids are unkeyed hashes of token ids, so with a known salt
  // anyone holding the tokenizer could test guesses of the text (a short run
  // after a known prefix can be found by trying every token); a secret
  // random salt, which TraceLog uses and writes nowhere, rules that out and
  // keeps every id of one file consistent with the others.
  explicit TraceSegmenter(int64_t memory_tokens = kDefaultMemoryTokens, uint64_t salt = kDefaultSalt)
      : memory_tokens_(memory_tokens), salt_(salt) {}

  // `cut_points`: lengths in (0, |prompt|) where the prompt is cut when no
  // remembered continuation spans them; others are ignored. Only points that
  // other prompts share are worth it (the anchor): a cut the next prompt
  // does not make costs the block it falls in once the memory is gone.
  // Remembers the prompt's new segments and the reply.
  SegmentedRequest Cut(std::span<const int32_t> prompt, std::span<const int64_t> cut_points,
                       std::span<const int32_t> output);

  int64_t remembered_tokens() const { return current_tokens_ + old_tokens_; }

 private:
  struct Continuation {
    uint64_t id = 0;
    std::vector<int32_t> tokens;  // the real tokens the segment stands for
  };
  using Generation = std::unordered_map<uint64_t, std::vector<Continuation>>;

  struct Match {
    uint64_t id = 0;
    int64_t shared_tokens = 0;  // 0: no continuation shares the first token
  };
  // The remembered continuation at `key` sharing the most leading tokens with `rest`.
  Match Find(uint64_t key, std::span<const int32_t> rest);
  void Remember(uint64_t key, uint64_t id, std::span<const int32_t> tokens);

  int64_t memory_tokens_;
  uint64_t salt_;
  Generation current_, old_;
  int64_t current_tokens_ = 0, old_tokens_ = 0;
};

}  // namespace lineage::trace
