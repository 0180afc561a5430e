// A thinking template's tool loop and the human turns around it (issue 12,
// defect 5), shaped like the recorded Claude Code session the server test
// replays. Qwen3.5 renders an assistant message's thinking only after the
// last human message: inside a tool loop every prompt repeats the previous
// one whole (thinking included), and the next human turn renders the loop's
// replies without their thinking, so it leaves the conversation a few tokens
// after the history end of the turn's first request.
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

using K = PointKind;

class ThinkingAgent {
 public:
  explicit ThinkingAgent(Harness& h) : h_(h) {
    prompt_ = src_.Fresh(1800);  // system prompt and tools
    anchor_ = Len(prompt_) - 2;
  }

  // A human message: every reply of the loop before it loses its thinking.
  Outcome HumanTurn() {
    history_ = Cat({history_, plain_loop_, src_.Fresh(150)});
    loop_.clear();
    plain_loop_.clear();
    return Send();
  }
  // A tool result: the reply is rendered with its thinking, then the result.
  Outcome ToolResult() {
    const Tokens call = src_.Fresh(20);
    const Tokens result = src_.Fresh(300);
    loop_ = Cat({loop_, header_, think_, src_.Fresh(40), call, result});
    plain_loop_ = Cat({plain_loop_, header_, call, result});
    return Send();
  }
  // The client sends the same body again.
  Outcome Resend() { return Send(); }
  // Where the newest turn's first request left its history end.
  int64_t turn_history_end() const { return turn_history_end_; }
  // Where the last request left its history end.
  int64_t history_end() const { return history_end_; }

 private:
  Outcome Send() {
    const Tokens history = Cat({prompt_, history_, loop_});
    history_end_ = Len(history);
    if (loop_.empty()) turn_history_end_ = history_end_;
    const Tokens p = Cat({history, header_, think_});
    Outcome o = h_.Run(p, {anchor_, Len(history)});
    // The server decodes a reply the next prompt does not repeat.
    EXPECT_TRUE(h_.Extend(o, src_.Fresh(12)).ok());
    return o;
  }

  Harness& h_;
  TokenSource src_;
  Tokens prompt_, history_, loop_, plain_loop_;
  const Tokens header_ = src_.Fresh(3);  // "<|im_start|>assistant\n"
  const Tokens think_ = src_.Fresh(2);   // "<think>\n"
  int64_t anchor_ = 0;
  int64_t turn_history_end_ = 0;
  int64_t history_end_ = 0;
};

TEST(CacheToolLoop, TheNextHumanTurnRestoresAtTheTurnsHistoryEnd) {
  Harness h;
  ThinkingAgent agent(h);
  agent.HumanTurn();
  for (int i = 0; i < 4; ++i) {
    const int64_t before = agent.history_end();
    Outcome o = agent.ToolResult();
    EXPECT_GE(o.restore.length, before) << "a loop request repeats the previous prompt whole";
  }
  const Outcome again = agent.Resend();
  EXPECT_EQ(again.restore.kind, K::kHistoryEnd) << "a resend restores at the newest history end";
  const int64_t first_turn = agent.turn_history_end();
  Outcome next = agent.HumanTurn();
  EXPECT_EQ(next.restore.length, first_turn) << next.lookup.ToString();
  EXPECT_EQ(next.restore.kind, K::kHistoryEnd);
  EXPECT_EQ(next.commit.absorbed.size(), 1u) << "the loop's tail is given up";

  // The same after a second loop: the history end of this turn's first
  // request, not the one the previous turn left behind.
  for (int i = 0; i < 4; ++i) agent.ToolResult();
  const int64_t second_turn = agent.turn_history_end();
  ASSERT_GT(second_turn, first_turn);
  Outcome third = agent.HumanTurn();
  EXPECT_EQ(third.restore.length, second_turn) << third.lookup.ToString();
  EXPECT_EQ(third.restore.kind, K::kHistoryEnd);
}

}  // namespace
}  // namespace lineage::cache::testing
