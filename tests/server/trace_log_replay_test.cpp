// The --trace-log writer on real token sequences: conversations rendered with
// the real Qwen3.5 (thinking) and Qwen2.5 (non-thinking) chat templates and a
// synthetic Qwen vocabulary, written by TraceLog, read back by the simulator's
// reader, and compared with the real token ids: the replayed common prefix of
// every request with every earlier prompt and prompt + reply, and what the
// oracle and the lineage policy restore.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/generation/prompt_builder.h"
#include "cache/cache_options.h"
#include "trace/trace_log.h"
#include "sim/policies/lineage_adapter.h"
#include "sim/policies/oracle.h"
#include "sim/replay.h"
#include "trace/trace_io.h"
#include "tools/synthetic_vocab.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
constexpr int64_t B = trace::TraceLog::kBlockTokens;

struct Logged {
  BuiltPrompt prompt;
  std::vector<int32_t> output;
};

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string TempPath(const std::string& tag) {
  return (std::filesystem::temp_directory_path() / ("lineage_trace_" + tag + std::to_string(::getpid()) + ".jsonl"))
      .string();
}

class TraceLogReplayTest : public ::testing::Test {
 protected:
  void Load(const std::string& template_name) {
    std::string path = std::string(LINEAGE_SHARED_DATA) + "/templates/" + template_name;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(4096, text::VocabFlavour::kQwen35, 1));
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = *tok;
    auto t = ChatTemplate::Create(ss.str(), "", "<|im_end|>");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    builder_ = std::make_unique<PromptBuilder>(tokenizer_, std::move(t).value());
  }

  void Add(const json& messages, const std::string& reply) {
    ApiRequest r;
    r.messages = messages;
    r.tools = json::parse(R"([{"type": "function", "function": {"name": "grep", "description": "search the tree",
        "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}}}])");
    auto p = builder_->Build(r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    requests_.push_back({*p, tokenizer_.Encode(reply, {.parse_special = true})});
  }

  // Writes every request 10 minutes apart (each finished before the next).
  sim::Trace WriteAndRead(int64_t memory_tokens = trace::TraceSegmenter::kDefaultMemoryTokens) {
    std::string path = TempPath("replay");
    {
      auto log = trace::TraceLog::Open(path, memory_tokens);
      EXPECT_TRUE(log.ok());
      int64_t t_ms = 0;
      for (const Logged& l : requests_) {
        (*log)->NoteSubmitted(l.prompt.tokens, l.prompt.history_end_tokens);
        (*log)->Append(t_ms, l.prompt.tokens, l.prompt.anchor_tokens, l.output);
        t_ms += 600'000;
      }
    }
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    EXPECT_NE(last.find("\"end\""), std::string::npos) << "no trailer: " << last;
    auto trace = sim::ReadTrace(path);  // verifies the trailer's count and checksum
    std::filesystem::remove(path);
    EXPECT_TRUE(trace.ok()) << trace.status().ToString();
    return trace.ok() ? *trace : sim::Trace{};
  }

  std::string SystemText() const {
    std::string s = "You are a coding agent in a C++ repository. ";
    for (int i = 0; i < 12; ++i)
      s += "Rule " + std::to_string(i) + ": read the file before editing it, run the tests after each change, "
           "and keep every answer short and exact. ";
    return s;
  }

  text::Tokenizer tokenizer_;
  std::unique_ptr<PromptBuilder> builder_;
  std::vector<Logged> requests_;
};

json Msg(const std::string& role, const std::string& content) { return {{"role", role}, {"content", content}}; }

// Every request against every earlier prompt and prompt + reply.
void ExpectReplayedLcpIsReal(const std::vector<Logged>& real, const sim::Trace& trace) {
  ASSERT_EQ(trace.requests.size(), real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    const sim::Request& r = trace.requests[i];
    ASSERT_EQ(r.num_prompt_tokens, static_cast<int64_t>(real[i].prompt.tokens.size()));
    for (size_t j = 0; j < i; ++j) {
      EXPECT_EQ(sim::Lcp(r.prompt, trace.requests[j].prompt), CommonPrefixTokens(real[i].prompt.tokens, real[j].prompt.tokens))
          << i << " vs prompt " << j;
      EXPECT_EQ(sim::Lcp(r.prompt, sim::PromptAndOutput(trace.requests[j])),
                CommonPrefixTokens(real[i].prompt.tokens, Concat(real[j].prompt.tokens, real[j].output)))
          << i << " vs prompt + reply " << j;
    }
  }
}

// Thinking template: turn extension (diverging a few tokens after the
// previous history end), a regenerate, a new session on the same system
// prompt, a longer session, a middle deletion.
class ThinkingConversation : public TraceLogReplayTest {
 protected:
  void SetUp() override {
    Load("Qwen3.5-4B.jinja");
    if (IsSkipped()) return;
    std::string tool_result = "src/a.cpp:12: // TODO: bound the queue\n";
    for (int i = 0; i < 10; ++i) tool_result += "src/b" + std::to_string(i) + ".cpp:4" + std::to_string(i) + ": // TODO: check\n";
    json s1 = json::array({Msg("system", SystemText()), Msg("user", "List the TODOs:\n" + tool_result)});
    Add(s1, "The user wants TODOs.\n</think>\n\nThere are 11 TODOs.<|im_end|>");          // 0
    json t2 = s1;
    t2.push_back(Msg("assistant", "There are 11 TODOs."));
    t2.push_back(Msg("user", "Fix the first one."));
    Add(t2, "Edit a.cpp.\n</think>\n\nDone: the queue is bounded.<|im_end|>");               // 1 extends 0
    Add(t2, "Maybe later.\n</think>\n\nI bounded the queue at 64.<|im_end|>");               // 2 regenerates 1
    json other = json::array({Msg("system", SystemText()), Msg("user", "What does main.cpp do?")});
    Add(other, "Look.\n</think>\n\nIt starts the server.<|im_end|>");                        // 3 new session
    json t3 = t2;
    t3.push_back(Msg("assistant", "I bounded the queue at 64."));
    t3.push_back(Msg("user", "Run the tests."));
    Add(t3, "Run.\n</think>\n\nAll 212 tests pass.<|im_end|>");                              // 4 extends 2
    json deleted = t3;
    deleted[1]["content"] = "[old tool output removed]";
    deleted.push_back(Msg("assistant", "All 212 tests pass."));
    deleted.push_back(Msg("user", "Commit."));
    Add(deleted, "Ok.\n</think>\n\nCommitted.<|im_end|>");                                   // 5 middle deletion
  }
};

TEST_F(ThinkingConversation, TheCasesAreWhatTheyClaim) {
  const auto& q = requests_;
  const int64_t h0 = q[0].prompt.history_end_tokens;
  ASSERT_GT(h0, 0);
  int64_t shared01 = CommonPrefixTokens(q[1].prompt.tokens, q[0].prompt.tokens);
  EXPECT_GT(shared01, h0);  // the next turn leaves the previous one after its history end...
  EXPECT_LT(shared01, static_cast<int64_t>(q[0].prompt.tokens.size()));  // ...but before its end
  EXPECT_GT(q[0].prompt.anchor_tokens, 2 * B);
  EXPECT_EQ(q[1].prompt.tokens, q[2].prompt.tokens);
  EXPECT_LT(CommonPrefixTokens(q[5].prompt.tokens, q[4].prompt.tokens), h0);
}

TEST_F(ThinkingConversation, ReplayedCommonPrefixesAreTheRealOnes) {
  sim::Trace trace = WriteAndRead();
  ExpectReplayedLcpIsReal(requests_, trace);
  for (size_t i = 0; i < requests_.size(); ++i) {
    EXPECT_EQ(trace.requests[i].history_end_tokens, requests_[i].prompt.history_end_tokens) << i;
    EXPECT_EQ(trace.requests[i].anchor_tokens, requests_[i].prompt.anchor_tokens) << i;
  }
}

// With nothing remembered, prompts still share every whole grid block below
// their common prefix: never longer than the real one, at most B short.
TEST_F(ThinkingConversation, WithoutMemoryPromptsStillShareWholeBlocks) {
  sim::Trace trace = WriteAndRead(/*memory_tokens=*/0);
  ASSERT_EQ(trace.requests.size(), requests_.size());
  for (size_t i = 0; i < requests_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      int64_t real = CommonPrefixTokens(requests_[i].prompt.tokens, requests_[j].prompt.tokens);
      int64_t replayed = sim::Lcp(trace.requests[i].prompt, trace.requests[j].prompt);
      EXPECT_LE(replayed, real) << i << " vs " << j;
      EXPECT_GE(replayed, (real - 1) / B * B) << i << " vs " << j;
    }
  }
}

TEST_F(ThinkingConversation, OracleAndLineageRestoreWhereTheServerWould) {
  sim::Trace trace = WriteAndRead();
  ASSERT_EQ(trace.requests.size(), requests_.size());
  sim::ModelShape shape = sim::FindShape("qwen3.5-0.8b").value();
  sim::OraclePolicy oracle(shape);
  auto o = sim::Replay(trace, shape, oracle);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  for (size_t i = 0; i < requests_.size(); ++i) {
    int64_t best = 0;
    for (size_t j = 0; j < i; ++j)
      best = std::max(best, CommonPrefixTokens(requests_[i].prompt.tokens,
                                               Concat(requests_[j].prompt.tokens, requests_[j].output)));
    EXPECT_EQ(o->restore_tokens[i], std::min<int64_t>(best, requests_[i].prompt.tokens.size() - 1)) << i;
  }
  sim::PolicyOptions options{shape.ram_budget_bytes, shape.disk_budget_bytes};
  sim::LineagePolicy lineage(shape, options, /*exact=*/false);
  auto l = sim::Replay(trace, shape, lineage);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_TRUE(lineage.status().ok()) << lineage.status().ToString();
  const auto& got = l->restore_tokens;
  const auto& q = requests_;
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], q[0].prompt.history_end_tokens);  // the history-end checkpoint
  EXPECT_EQ(got[2], q[1].prompt.history_end_tokens);  // the regenerate: same point
  EXPECT_EQ(got[3], cache::AnchorPoint({q[3].prompt.anchor_tokens, 0}));  // the anchor, at the server's capture point
  EXPECT_EQ(got[4], q[2].prompt.history_end_tokens);
  EXPECT_GE(got[5], cache::AnchorPoint({q[5].prompt.anchor_tokens, 0}));
}

// Non-thinking template: the next prompt repeats the reply verbatim.
class PlainConversation : public TraceLogReplayTest {
 protected:
  void SetUp() override {
    Load("Qwen-Qwen2.5-7B-Instruct.jinja");
    if (IsSkipped()) return;
    json t1 = json::array({Msg("system", SystemText()), Msg("user", "Which files mention the queue?")});
    std::string reply = "The queue is in src/server/generation/scheduler.cpp and src/engine/batch.cpp; ";
    for (int i = 0; i < 8; ++i) reply += "line " + std::to_string(100 + i) + " bounds it; ";
    Add(t1, reply + "<|im_end|>");
    json t2 = t1;
    t2.push_back(Msg("assistant", reply));
    t2.push_back(Msg("user", "Open the first."));
    Add(t2, "Opening.<|im_end|>");
    // A regenerate. Its reply begins unlike the first one: replies are not
    // cut, so two replies of one prompt that begin alike share nothing in
    // replay (docs/traces.md).
    Add(t2, "I opened it.<|im_end|>");
    json t3 = t2;
    t3.push_back(Msg("assistant", "I opened it."));
    t3.push_back(Msg("user", "Thanks."));
    Add(t3, "You are welcome.<|im_end|>");
  }
};

TEST_F(PlainConversation, ARepeatedReplyMatchesThePreviousPromptAndReply) {
  const auto& q = requests_;
  const int64_t m0 = static_cast<int64_t>(q[0].prompt.tokens.size());
  int64_t shared = CommonPrefixTokens(q[1].prompt.tokens, Concat(q[0].prompt.tokens, q[0].output));
  ASSERT_GE(shared, m0 + static_cast<int64_t>(q[0].output.size()));  // the whole reply is repeated
  ASSERT_GT(q[0].output.size(), static_cast<size_t>(B));             // across grid blocks
  sim::Trace trace = WriteAndRead();
  ExpectReplayedLcpIsReal(requests_, trace);
}

}  // namespace
}  // namespace lineage::server
