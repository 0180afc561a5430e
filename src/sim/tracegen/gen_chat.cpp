// Chat clients: regenerates, edits of the last message and verbatim retries;
// and a client whose rolling window drops the oldest turns.
#include <string>

#include "sim/tracegen/scenarios.h"

namespace lineage::sim::gen {

void Retries(GenContext& g, int64_t target) {
  Segment system = g.Seg("retry.sys", 4000, Role::kSystem);
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s) {
    Conversation c(g, "retry." + std::to_string(s), g.rng.Range(0, kDayMs));
    c.StartWith({system});
    int64_t turns = g.rng.Range(3, 12);
    for (int64_t t = 0; t < turns && g.emitted() - start < target; ++t) {
      c.history.push_back(c.NewSeg("user", g.rng.Range(20, 400)));
      Segment reply = c.Send(g.rng.Range(100, 800));
      double roll = g.rng.Unit();
      if (roll < 0.10) {  // regenerate: the same prompt, a new reply
        c.Wait(g.rng.Range(5000, 30'000));
        reply = c.Send(g.rng.Range(100, 800));
      } else if (roll < 0.20) {  // edit of the last message
        c.Wait(g.rng.Range(5000, 60'000));
        c.history.back() = c.NewSeg("edit", g.rng.Range(20, 400));
        reply = c.Send(g.rng.Range(100, 800));
      } else if (roll < 0.28) {  // dropped stream: the same prompt again while the first still runs
        c.now_ms += g.rng.Range(1000, 5000);
        reply = c.Send(g.rng.Range(100, 800));
      }
      c.Wait(g.rng.Range(10'000, 180'000));
      c.history.push_back(reply);
    }
  }
}

void RollingWindow(GenContext& g, int64_t target) {
  Segment system = g.Seg("window.sys", 4000, Role::kSystem);
  const int64_t kWindowTokens = 32'000;
  const int64_t start = g.emitted();
  for (int64_t s = 0; g.emitted() - start < target; ++s) {
    Conversation c(g, "window." + std::to_string(s), g.rng.Range(0, kDayMs));
    c.StartWith({system});
    int64_t turns = g.rng.Range(20, 80);
    for (int64_t t = 0; t < turns && g.emitted() - start < target; ++t) {
      c.history.push_back(c.NewSeg("user", g.rng.Range(50, 500)));
      // Drop whole turns (user + reply) after the system prompt until the window fits.
      while (c.num_tokens() > kWindowTokens && c.history.size() > 3) c.history.erase(c.history.begin() + 1, c.history.begin() + 3);
      Segment reply = c.Send(g.rng.Range(200, 1500));
      c.Wait(g.rng.Range(10'000, 120'000));
      c.history.push_back(reply);
    }
  }
}

}  // namespace lineage::sim::gen
