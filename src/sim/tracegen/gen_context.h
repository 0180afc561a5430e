// GenContext and Conversation: the building blocks of `lineage tracegen`.
//
// GenContext owns the trace being generated and a deterministic random
// source (SplitMix64; no std distributions, whose output differs between
// standard libraries), so a seed gives the same trace on every machine.
// Conversation keeps one client's history as segments and sends it; the
// times it picks assume the pacing shape's speeds (prefill of the new tokens,
// decode of the reply; glm-5.3-flash unless told otherwise) plus think time,
// so a session's next request normally arrives after the previous reply ended
// on that shape.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace lineage::sim::gen {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi] (inclusive).
  int64_t Range(int64_t lo, int64_t hi);
  double Unit();  // [0, 1)
  bool Chance(double p) { return Unit() < p; }

 private:
  uint64_t state_;
};

inline constexpr int64_t kDayMs = 24LL * 3600 * 1000;

class GenContext {
 public:
  explicit GenContext(uint64_t seed) : rng(seed) {}
  Rng rng;
  Trace trace;
  // Speeds the session timing assumes.
  double prefill_tokens_per_s = 420.0;
  double decode_s_per_token = 0.033;

  uint32_t NewSession(const std::string& name);
  Segment Seg(const std::string& name, int64_t num_tokens, Role role = Role::kUser) const;
  void Emit(Request request);
  // Sorts by arrival (stable) and keeps the first `max_requests`.
  void Finish(int64_t max_requests);
  int64_t emitted() const { return static_cast<int64_t>(trace.requests.size()); }
};

class Conversation {
 public:
  Conversation(GenContext& g, const std::string& tag, int64_t start_ms);

  std::vector<Segment> history;  // what the next prompt sends
  int64_t anchor_tokens = 0;
  int64_t system_end_tokens = 0; // where the system text ends before the tools; 0 = none
  int64_t now_ms = 0;            // when the next request is sent

  const std::string& tag() const { return tag_; }
  std::string Name(const std::string& what);  // unique segment name within the conversation
  Segment NewSeg(const std::string& what, int64_t num_tokens, Role role = Role::kUser);

  // Sends `history` at now_ms with a reply of `reply_tokens` (ending, as
  // end_ms says, after the modelled prefill and decode); returns the reply
  // segment. Does not append the reply and does not advance time.
  Segment Send(int64_t reply_tokens);
  // Advances now_ms past the modelled reply of the last Send plus `think_ms`.
  void Wait(int64_t think_ms);
  // Starts the history with a shared prefix, which becomes the anchor.
  void StartWith(std::vector<Segment> prefix);
  // One step of a tool loop: sends with a reply (the call) of `call_tokens`,
  // waits `tool_ms` for the tool, then appends the call, repeated verbatim,
  // and a tool result of `result_tokens`. Each is drawn uniformly from its
  // {lo, hi} in this order (drawn here, not in the caller's argument list,
  // whose evaluation order C++ leaves open).
  struct Span {
    int64_t lo, hi;
  };
  void ToolCall(Span call_tokens, Span tool_ms, Span result_tokens);
  int64_t num_tokens() const { return NumTokens(history); }

 private:
  // The modelled prefill of the last Send's new tokens plus its reply's decode.
  int64_t BusyMs() const;
  GenContext& g_;
  std::string tag_;
  uint32_t session_;
  int64_t counter_ = 0;
  int64_t last_new_tokens_ = 0;
  int64_t last_reply_tokens_ = 0;
  std::vector<Segment> last_sent_;
};

}  // namespace lineage::sim::gen
