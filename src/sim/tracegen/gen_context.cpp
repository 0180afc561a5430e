#include "sim/tracegen/gen_context.h"

#include <algorithm>

namespace lineage::sim::gen {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t Rng::Range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(Next() % span);
}

double Rng::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

uint32_t GenContext::NewSession(const std::string& name) {
  trace.sessions.push_back(name);
  return static_cast<uint32_t>(trace.sessions.size() - 1);
}

Segment GenContext::Seg(const std::string& name, int64_t num_tokens, Role role) const {
  return Segment{SegmentIdFromString(name), static_cast<uint32_t>(std::max<int64_t>(1, num_tokens)), role};
}

void GenContext::Emit(Request request) {
  request.num_prompt_tokens = NumTokens(request.prompt);
  trace.requests.push_back(std::move(request));
}

void GenContext::Finish(int64_t max_requests) {
  std::stable_sort(trace.requests.begin(), trace.requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_ms < b.arrival_ms; });
  if (static_cast<int64_t>(trace.requests.size()) > max_requests)
    trace.requests.resize(static_cast<size_t>(max_requests));
}

Conversation::Conversation(GenContext& g, const std::string& tag, int64_t start_ms)
    : now_ms(start_ms), g_(g), tag_(tag), session_(g.NewSession(tag)) {}

std::string Conversation::Name(const std::string& what) { return tag_ + "." + what + "." + std::to_string(counter_++); }

Segment Conversation::NewSeg(const std::string& what, int64_t num_tokens, Role role) {
  return g_.Seg(Name(what), num_tokens, role);
}

Segment Conversation::Send(int64_t reply_tokens) {
  Request r;
  r.arrival_ms = now_ms;
  r.session = session_;
  r.prompt = history;
  r.output = NewSeg("reply", reply_tokens, Role::kAssistant);
  r.output.num_tokens = static_cast<uint32_t>(std::max<int64_t>(0, reply_tokens));
  r.anchor_tokens = std::min(anchor_tokens, NumTokens(history));
  r.system_end_tokens = system_end_tokens < r.anchor_tokens ? system_end_tokens : 0;
  last_new_tokens_ = NumTokens(history) - Lcp(last_sent_, history);
  last_reply_tokens_ = reply_tokens;
  last_sent_ = history;
  // When the reply ends on the pacing shape: the replay holds a session's
  // next turn behind it on a slower shape (docs/sim.md, arrival).
  r.end_ms = now_ms + BusyMs();
  Segment reply = r.output;
  g_.Emit(std::move(r));
  return reply;
}

int64_t Conversation::BusyMs() const {
  const double busy_s = static_cast<double>(last_new_tokens_) / g_.prefill_tokens_per_s +
                        static_cast<double>(last_reply_tokens_) * g_.decode_s_per_token;
  return static_cast<int64_t>(busy_s * 1000.0);
}

void Conversation::Wait(int64_t think_ms) { now_ms += BusyMs() + think_ms; }

void Conversation::StartWith(std::vector<Segment> prefix) {
  history = std::move(prefix);
  anchor_tokens = num_tokens();
}

void Conversation::ToolCall(Span call_tokens, Span tool_ms, Span result_tokens) {
  Segment call = Send(g_.rng.Range(call_tokens.lo, call_tokens.hi));
  Wait(g_.rng.Range(tool_ms.lo, tool_ms.hi));
  history.push_back(call);
  history.push_back(NewSeg("tool", g_.rng.Range(result_tokens.lo, result_tokens.hi), Role::kTool));
}

}  // namespace lineage::sim::gen
