#include "trace/trace.h"

#include <xxhash.h>

#include <algorithm>

namespace lineage::trace {

uint32_t TokenAt(uint64_t id, uint32_t i) {
  uint64_t z = id + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z & 0x7FFFFFFFu);
}

uint64_t SegmentIdFromString(const std::string& text) { return XXH64(text.data(), text.size(), 0); }

int64_t NumTokens(std::span<const Segment> segments) {
  int64_t n = 0;
  for (const Segment& s : segments) n += s.num_tokens;
  return n;
}

std::vector<Segment> TruncateTokens(std::span<const Segment> segments, int64_t num_tokens) {
  std::vector<Segment> out;
  for (const Segment& s : segments) {
    if (num_tokens <= 0) break;
    Segment cut = s;
    cut.num_tokens = static_cast<uint32_t>(std::min<int64_t>(s.num_tokens, num_tokens));
    num_tokens -= cut.num_tokens;
    out.push_back(cut);
  }
  return out;
}

namespace {
// A position inside a segment list, advanced token by token.
struct Cursor {
  std::span<const Segment> segs;
  size_t seg = 0;
  uint32_t offset = 0;
  bool done() const { return seg >= segs.size(); }
  uint32_t token() const { return TokenAt(segs[seg].id, offset); }
  void next() {
    if (++offset >= segs[seg].num_tokens) {
      ++seg;
      offset = 0;
    }
  }
};
}  // namespace

int64_t Lcp(std::span<const Segment> a, std::span<const Segment> b) {
  int64_t n = 0;
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i].id == b[i].id && a[i].num_tokens == b[i].num_tokens) {
    n += a[i].num_tokens;
    ++i;
  }
  Cursor ca{a, i, 0}, cb{b, i, 0};
  // Same id, different length: the shorter is a prefix of the longer.
  if (!ca.done() && !cb.done() && a[i].id == b[i].id) {
    uint32_t common = std::min(a[i].num_tokens, b[i].num_tokens);
    n += common;
    ca.offset = cb.offset = common;
    if (ca.offset >= a[i].num_tokens) { ++ca.seg; ca.offset = 0; }
    if (cb.offset >= b[i].num_tokens) { ++cb.seg; cb.offset = 0; }
  }
  while (!ca.done() && !cb.done() && ca.token() == cb.token()) {
    ++n;
    ca.next();
    cb.next();
  }
  return n;
}

void ExpandTokens(std::span<const Segment> segments, std::vector<uint32_t>& out) {
  out.reserve(out.size() + static_cast<size_t>(NumTokens(segments)));
  for (const Segment& s : segments)
    for (uint32_t i = 0; i < s.num_tokens; ++i) out.push_back(TokenAt(s.id, i));
}

std::vector<Segment> PromptAndOutput(const Request& request) {
  std::vector<Segment> seq = request.prompt;
  if (request.output.num_tokens > 0) seq.push_back(request.output);
  return seq;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kUser: return "user";
    case Role::kSystem: return "system";
    case Role::kTools: return "tools";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
  }
  return "user";
}

bool ParseRole(const std::string& name, Role* role) {
  for (Role r : {Role::kUser, Role::kSystem, Role::kTools, Role::kAssistant, Role::kTool}) {
    if (name == RoleName(r)) {
      *role = r;
      return true;
    }
  }
  return false;
}

}  // namespace lineage::trace
