// Trace: the simulator's in-memory form of a request stream (docs/traces.md).
//
// A prompt is a list of segments; a segment's token ids are a pure function of
// its id (TokenAt), so equal ids mean equal tokens and a shorter segment with
// the same id is a prefix of a longer one. This keeps 10,000 requests of
// 50,000 tokens in a few tens of MB; token ids are expanded one request at a
// time where a policy needs them (ExpandTokens).
//
// Invariants: every prompt segment has num_tokens >= 1; requests are sorted by
// arrival_ms. Immutable after loading; safe to read from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lineage::trace {

enum class Role : uint8_t { kUser = 0, kSystem, kTools, kAssistant, kTool };

struct Segment {
  uint64_t id = 0;
  uint32_t num_tokens = 0;
  Role role = Role::kUser;
};

struct Request {
  int64_t arrival_ms = 0;
  uint32_t session = 0;          // index into Trace::sessions
  std::vector<Segment> prompt;
  Segment output;                // the reply; num_tokens may be 0
  int64_t anchor_tokens = 0;     // shared system + tools prefix length; 0 = unknown
  int64_t history_end_tokens = 0; // where the generation prompt begins; 0 = unknown
  int64_t system_end_tokens = 0; // where the system text ends before the tools; 0 = unknown
  int64_t end_ms = -1;           // when the reply really ended (>= arrival_ms); -1 = unknown
  int64_t num_prompt_tokens = 0; // sum of prompt segment lengths
};

struct Trace {
  std::string scenario;
  uint64_t seed = 0;
  std::vector<std::string> sessions;
  std::vector<Request> requests;
};

// The i-th token of segment `id`: 31-bit, deterministic (docs/traces.md).
uint32_t TokenAt(uint64_t id, uint32_t i);

// Maps a textual segment id to the numeric id space.
uint64_t SegmentIdFromString(const std::string& text);

int64_t NumTokens(std::span<const Segment> segments);

// The first `num_tokens` tokens of `segments` as segments (the last one cut).
std::vector<Segment> TruncateTokens(std::span<const Segment> segments, int64_t num_tokens);

// Token-level longest common prefix of two segment lists. Walks whole
// segments while ids and lengths agree, then compares token by token.
int64_t Lcp(std::span<const Segment> a, std::span<const Segment> b);

// Appends the token ids of `segments` to `out`.
void ExpandTokens(std::span<const Segment> segments, std::vector<uint32_t>& out);

// prompt followed by the output segment (the sequence a finished request's
// state covers once its reply is decoded).
std::vector<Segment> PromptAndOutput(const Request& request);

const char* RoleName(Role role);
bool ParseRole(const std::string& name, Role* role);

}  // namespace lineage::trace
