// Traffic without hints, shaped like Mooncake's public traces (conversation,
// document QA and tool-agent traffic; docs/sim.md, `mooncake`): no anchor, no
// history end, no roles, and prompts cut into prefix-chained 512-token
// blocks, so two prompts share whole blocks only, as a replayed Mooncake
// trace does (docs/traces.md, "Mooncake").
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "trace/trace_io.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::sim::gen {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}

// The prompt as Mooncake blocks: block k's id hashes block k-1's id and the
// (segment id, offset, length) pieces it holds, so equal ids mean equal
// prefixes and a partial last block differs from a whole one from its first
// token, exactly as a trace read from hash_ids replays.
std::vector<Segment> MooncakeBlocks(const std::vector<Segment>& prompt) {
  std::vector<Segment> out;
  uint64_t chain = 0x6D6F6F6E63616B65ull;  // "mooncake"
  uint64_t h = chain;
  int64_t in_block = 0;
  auto close_block = [&] {
    chain = h;
    out.push_back({chain & 0x7FFFFFFFFFFFFFFFull, static_cast<uint32_t>(in_block), Role::kUser});
    in_block = 0;
  };
  for (const Segment& s : prompt) {
    for (int64_t off = 0; off < s.num_tokens;) {
      const int64_t take = std::min<int64_t>(s.num_tokens - off, kMooncakeBlockTokens - in_block);
      h = Mix(Mix(Mix(h, s.id), static_cast<uint64_t>(off)), static_cast<uint64_t>(take));
      in_block += take;
      off += take;
      if (in_block == kMooncakeBlockTokens) close_block();
    }
  }
  if (in_block > 0) close_block();
  return out;
}

// The session rates below load a machine that prefills this fast (the
// default pace, glm-5.3-flash) about as one server is loaded: the oracle
// queues a little (docs/sim.md). A trace paced for another shape scales
// them by its prefill speed, so that it loads that machine alike.
constexpr double kRatesPrefillTokensPerS = 420.0;

// Session starts as a Poisson process of `per_s` sessions a second (scaled
// to the pace's machine).
int64_t NextStart(GenContext& g, int64_t t_ms, double per_s) {
  const double u = std::max(1e-9, g.rng.Unit());
  const double rate = per_s * g.prefill_tokens_per_s / kRatesPrefillTokensPerS;
  return t_ms + static_cast<int64_t>(-std::log(u) / rate * 1000.0);
}

// Starts sessions as a Poisson process of `per_s` a second from start_ms
// until `target` requests are emitted; `session` fills one, asking more()
// before each request.
void Sessions(GenContext& g, int64_t target, int64_t start_ms, double per_s, const std::string& tag,
              const std::function<void(Conversation&, const std::function<bool()>&)>& session) {
  const int64_t begin = g.emitted();
  const std::function<bool()> more = [&] { return g.emitted() - begin < target; };
  int64_t t = start_ms;
  for (int64_t s = 0; more(); ++s) {
    t = NextStart(g, t, per_s);
    Conversation c(g, tag + std::to_string(s), t);
    session(c, more);
  }
}

// One user turn: a message of `user_tokens`, the reply, the user's pause,
// then the reply joins the history. Drawn in that order.
void Turn(GenContext& g, Conversation& c, const std::string& what, Conversation::Span user_tokens,
          Conversation::Span reply_tokens, Conversation::Span think_ms) {
  c.history.push_back(c.NewSeg(what, g.rng.Range(user_tokens.lo, user_tokens.hi)));
  Segment reply = c.Send(g.rng.Range(reply_tokens.lo, reply_tokens.hi));
  c.Wait(g.rng.Range(think_ms.lo, think_ms.hi));
  c.history.push_back(reply);
}

void DocumentQa(GenContext& g, int64_t target, int64_t start_ms) {
  // A few long documents (contracts, papers, code files) with Zipf-like
  // popularity; each session asks 1-6 questions about one.
  const int kDocs = 8;
  Segment system = g.Seg("mc.qa.sys", 180);
  std::vector<Segment> docs;
  for (int k = 0; k < kDocs; ++k) docs.push_back(g.Seg("mc.qa.doc." + std::to_string(k), g.rng.Range(6000, 30000)));
  Sessions(g, target, start_ms, 0.25, "mc.qa.", [&](Conversation& c, const std::function<bool()>& more) {
    size_t doc = 0;
    while (doc + 1 < docs.size() && g.rng.Chance(0.45)) ++doc;
    c.history = {system, docs[doc]};
    const int64_t questions = g.rng.Range(1, 6);
    for (int64_t q = 0; q < questions && more(); ++q) Turn(g, c, "question", {15, 250}, {60, 500}, {5'000, 90'000});
  });
}

void Chat(GenContext& g, int64_t target, int64_t start_ms) {
  // Many applications, each with its own system prompt, and long multi-turn
  // chats (Mooncake's conversation trace averages ~12k input tokens).
  const int kApps = 24;
  std::vector<Segment> system;
  for (int k = 0; k < kApps; ++k) system.push_back(g.Seg("mc.chat.sys." + std::to_string(k), g.rng.Range(600, 5000)));
  Sessions(g, target, start_ms, 0.08, "mc.chat.", [&](Conversation& c, const std::function<bool()>& more) {
    c.history = {system[static_cast<size_t>(g.rng.Range(0, kApps - 1))]};
    if (g.rng.Chance(0.3)) c.history.push_back(c.NewSeg("paste", g.rng.Range(2000, 12000)));
    const int64_t turns = g.rng.Range(2, 14);
    for (int64_t k = 0; k < turns && more(); ++k) Turn(g, c, "user", {20, 1200}, {100, 700}, {10'000, 150'000});
  });
}

void ToolAgent(GenContext& g, int64_t target, int64_t start_ms) {
  // Agents over a few shared tool prefixes, each task a loop of tool calls.
  const int kAgents = 4;
  std::vector<Segment> prefix;
  for (int k = 0; k < kAgents; ++k) prefix.push_back(g.Seg("mc.tool.sys." + std::to_string(k), g.rng.Range(3000, 7000)));
  Sessions(g, target, start_ms, 0.05, "mc.tool.", [&](Conversation& c, const std::function<bool()>& more) {
    c.history = {prefix[static_cast<size_t>(g.rng.Range(0, kAgents - 1))]};
    c.history.push_back(c.NewSeg("task", g.rng.Range(30, 400)));
    const int64_t calls = g.rng.Range(1, 8);
    for (int64_t k = 0; k < calls && more(); ++k) c.ToolCall({30, 200}, {300, 4000}, {100, 2500});
    if (more()) c.Send(g.rng.Range(80, 400));
  });
}

}  // namespace

void Mooncake(GenContext& g, int64_t target) {
  const int64_t begin = g.emitted();
  const int64_t start_ms = g.rng.Range(0, 60'000);
  DocumentQa(g, target * 45 / 100 + 1, start_ms);
  Chat(g, target * 35 / 100 + 1, start_ms);
  ToolAgent(g, target * 20 / 100 + 1, start_ms);
  for (size_t i = static_cast<size_t>(begin); i < g.trace.requests.size(); ++i) {
    Request& r = g.trace.requests[i];
    r.prompt = MooncakeBlocks(r.prompt);
    r.output.role = Role::kUser;
    r.anchor_tokens = 0;
    r.history_end_tokens = 0;
  }
}

}  // namespace lineage::sim::gen
