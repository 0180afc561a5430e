// Scheduled assistant agents, a timestamp inside a system prompt, and fresh
// sessions through the day: traffic of short questions behind long prefixes.
#include <string>

#include "sim/tracegen/scenarios.h"

namespace lineage::sim::gen {

void Assistants(GenContext& g, int64_t target) {
  // Several agents share one tool block and differ in their system text; the
  // template puts tools first (as GLM's does). 9-12k tokens per prefix.
  const int kAgents = 5;
  const int64_t kPeriodMs = 30LL * 60 * 1000;
  Segment tools = g.Seg("assist.tools", 7000, Role::kTools);
  std::vector<Segment> system;
  for (int k = 0; k < kAgents; ++k)
    system.push_back(g.Seg("assist.sys." + std::to_string(k), g.rng.Range(2000, 5000), Role::kSystem));
  const int64_t start = g.emitted();
  for (int64_t run = 0; g.emitted() - start < target; ++run) {
    for (int k = 0; k < kAgents && g.emitted() - start < target; ++k) {
      int64_t t = run * kPeriodMs + k * 3 * 60 * 1000 + g.rng.Range(0, 60 * 1000);
      Conversation c(g, "assist" + std::to_string(k) + "." + std::to_string(run), t);
      c.StartWith({tools, system[static_cast<size_t>(k)]});
      c.history.push_back(c.NewSeg("question", g.rng.Range(7, 40)));
      int64_t tool_calls = g.rng.Range(0, 3);
      for (int64_t s = 0; s < tool_calls; ++s)
        c.ToolCall({30, 90}, {500, 3000}, {100, 800});
      c.Send(g.rng.Range(50, 300));
    }
  }
}

void Clock(GenContext& g, int64_t target) {
  // The system prompt renders the current minute between its head and tail,
  // so every request re-renders it and two requests a minute apart diverge
  // ~1.5k tokens in.
  Segment head = g.Seg("clock.head", 1500, Role::kSystem);
  Segment tail = g.Seg("clock.tail", 8000, Role::kTools);
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s) {
    Conversation c(g, "clock." + std::to_string(s), g.rng.Range(0, kDayMs));
    c.history = {head, head, tail};
    int64_t turns = g.rng.Range(1, 4);
    for (int64_t t = 0; t < turns && g.emitted() - start < target; ++t) {
      c.history[1] = g.Seg("clock.minute." + std::to_string(c.now_ms / 60000), 12, Role::kSystem);
      c.anchor_tokens = head.num_tokens + 12 + tail.num_tokens;
      c.history.push_back(c.NewSeg("question", g.rng.Range(10, 120)));
      Segment reply = c.Send(g.rng.Range(40, 400));
      c.Wait(g.rng.Range(20'000, 240'000));
      c.history.push_back(reply);
    }
  }
}

void Fresh(GenContext& g, int64_t target) {
  const int kPrompts = 3;
  std::vector<Segment> system;
  for (int k = 0; k < kPrompts; ++k)
    system.push_back(g.Seg("fresh.sys." + std::to_string(k), g.rng.Range(2000, 12000), Role::kSystem));
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s) {
    Conversation c(g, "fresh." + std::to_string(s), g.rng.Range(0, kDayMs));
    c.StartWith({system[static_cast<size_t>(g.rng.Range(0, kPrompts - 1))]});
    int64_t turns = g.rng.Range(1, 6);
    for (int64_t t = 0; t < turns && g.emitted() - start < target; ++t) {
      c.history.push_back(c.NewSeg("user", g.rng.Range(10, 300)));
      Segment reply = c.Send(g.rng.Range(50, 600));
      c.Wait(g.rng.Range(20'000, 300'000));
      c.history.push_back(reply);
    }
  }
}

}  // namespace lineage::sim::gen
