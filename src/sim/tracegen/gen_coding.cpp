// Coding-tool traffic: long growing sessions of tool-call loops, parallel
// sub-agents with their own tool lists, and a client that deletes old tool
// results in the middle when the context is nearly full.
#include <algorithm>
#include <string>

#include "sim/tracegen/scenarios.h"

namespace lineage::sim::gen {
namespace {

// The coding tool's system block as a template that renders the system text
// before the tools (Qwen3's) gives it: the instructions, the agent type's
// tool list, a 4-token slot that names the agent type, and a short tail.
// Sub-agent types (explore, general, review) have tool lists of their own,
// so they share the instructions only: the system end (docs/traces.md).
struct CodingPrompt {
  Segment instructions, tail;
  std::vector<Segment> tools;     // [0] is the main agent's
  std::vector<Segment> variants;  // [0] is the main agent
  std::vector<Segment> Block(size_t type) const { return {instructions, tools[type], variants[type], tail}; }
};

CodingPrompt MakePrompt(GenContext& g) {
  CodingPrompt p;
  p.instructions = g.Seg("code.sys.instructions", 2500, Role::kSystem);
  p.tail = g.Seg("code.sys.tail", 40, Role::kSystem);
  p.tools.push_back(g.Seg("code.sys.tools.0", 7000, Role::kSystem));
  for (int k = 1; k < 4; ++k)
    p.tools.push_back(g.Seg("code.sys.tools." + std::to_string(k), g.rng.Range(2000, 6000), Role::kSystem));
  for (int k = 0; k < 4; ++k) p.variants.push_back(g.Seg("code.sys.variant." + std::to_string(k), 4, Role::kSystem));
  return p;
}

void StartAgent(Conversation& c, const CodingPrompt& p, size_t type) {
  c.StartWith(p.Block(type));
  c.system_end_tokens = p.instructions.num_tokens;
}

// Runs 2-4 sub-agents from `c.now_ms` in parallel; returns when the last ends.
int64_t RunSubAgents(GenContext& g, Conversation& parent, const CodingPrompt& p) {
  int64_t count = g.rng.Range(2, 4), end_ms = parent.now_ms;
  for (int64_t j = 0; j < count; ++j) {
    Conversation sub(g, parent.tag() + ".sub" + std::to_string(j) + "." + std::to_string(parent.now_ms), parent.now_ms);
    StartAgent(sub, p, static_cast<size_t>(g.rng.Range(1, 3)));
    sub.history.push_back(sub.NewSeg("task", g.rng.Range(100, 800)));
    int64_t steps = g.rng.Range(2, 8);
    for (int64_t s = 0; s < steps; ++s)
      sub.ToolCall({40, 300}, {1000, 8000}, {100, 3000});
    sub.Send(g.rng.Range(100, 500));
    sub.Wait(0);
    end_ms = std::max(end_ms, sub.now_ms);
  }
  return end_ms;
}

// One coding session. With `delete_at_tokens` > 0 the client replaces the
// three oldest tool results by a short placeholder whenever the context
// passes that size.
void CodingSession(GenContext& g, const CodingPrompt& p, const std::string& tag, int64_t target, int64_t start,
                   bool sub_agents, int64_t delete_at_tokens, int64_t max_steps) {
  Conversation c(g, tag, g.rng.Range(0, kDayMs));
  StartAgent(c, p, 0);
  c.history.push_back(c.NewSeg("task", g.rng.Range(50, 300)));
  Segment cleared = g.Seg("code.cleared", 8, Role::kTool);
  int64_t sub_runs = 0;
  for (int64_t step = 0; step < max_steps && g.emitted() - start < target; ++step) {
    if (delete_at_tokens > 0 && c.num_tokens() > delete_at_tokens) {
      int removed = 0;
      for (Segment& s : c.history)
        if (s.role == Role::kTool && s.id != cleared.id && removed < 3) {
          s = cleared;
          ++removed;
        }
    }
    if (c.num_tokens() > 150'000) break;
    Segment call = c.Send(g.rng.Range(40, 400));
    c.Wait(g.rng.Range(1000, 10'000));
    c.history.push_back(call);
    if (sub_agents && sub_runs < 2 && g.rng.Chance(0.06)) {
      ++sub_runs;
      c.now_ms = RunSubAgents(g, c, p);
      c.history.push_back(c.NewSeg("subagent.results", g.rng.Range(300, 1500), Role::kTool));
    } else {
      c.history.push_back(c.NewSeg("tool", g.rng.Range(100, 4000), Role::kTool));
    }
    if (g.rng.Chance(0.12)) {
      c.now_ms += g.rng.Range(10'000, 120'000);
      c.history.push_back(c.NewSeg("user", g.rng.Range(10, 200)));
    }
  }
}

}  // namespace

void Coding(GenContext& g, int64_t target) {
  CodingPrompt p = MakePrompt(g);
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s)
    CodingSession(g, p, "code." + std::to_string(s), target, start, true, 0, g.rng.Range(10, 60));
}

void MiddleDelete(GenContext& g, int64_t target) {
  CodingPrompt p = MakePrompt(g);
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s)
    CodingSession(g, p, "middle." + std::to_string(s), target, start, false, 90'000, g.rng.Range(40, 90));
}

}  // namespace lineage::sim::gen
