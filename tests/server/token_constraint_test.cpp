// Constrained sampling on a synthetic byte-level vocabulary:
//   - the trie walk (with its plain-text fast path) allows exactly the tokens
//     a brute-force check of every token's bytes allows, at every step;
//   - random masked sampling always yields a reply that the output parser
//     reads as tool calls of allowed tools, with arguments that satisfy the
//     tool's schema (checked by an independent validator), and nothing else.
#include <gtest/gtest.h>

#include <random>

#include "engine/sampler.h"
#include "server/replies/output_parser.h"
#include "server/tools/token_constraint.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

class TokenConstraintTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(8192, text::VocabFlavour::kQwen35, 7));
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = new text::Tokenizer(*tok);
    vocab_ = TokenConstraintVocab::Build(*tokenizer_);
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    vocab_.reset();
  }

  // Every token judged on its own: its bytes advance a copy of the state,
  // or it ends the reply where the reply may end.
  static std::vector<bool> BruteForce(const ToolMatcher& m) {
    std::vector<bool> allowed(tokenizer_->vocab_size(), false);
    for (int32_t id = 0; id < tokenizer_->vocab_size(); ++id) {
      if (tokenizer_->IsEndOfGeneration(id)) {
        allowed[id] = m.Accepting();
        continue;
      }
      if (tokenizer_->IsControl(id) || tokenizer_->TokenBytes(id).empty()) continue;
      ToolMatcher copy = m;
      allowed[id] = copy.Advance(tokenizer_->TokenBytes(id));
    }
    return allowed;
  }

  struct Reply {
    std::string text;
    bool ended = false;
    int tokens = 0;
  };

  static Reply Sample(std::shared_ptr<const ToolGrammar> grammar, uint64_t seed, bool brute_force) {
    TokenConstraint c(grammar, vocab_);
    engine::Sampler sampler({.temperature = 1.0f, .seed = seed});
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(tokenizer_->vocab_size()), masked;
    Reply r;
    for (; r.tokens < 4000; ++r.tokens) {
      Status st = c.ComputeMask();
      EXPECT_TRUE(st.ok()) << st.ToString() << " after: " << r.text;
      if (!st.ok()) return r;
      if (brute_force) {
        std::vector<bool> expected = BruteForce(c.matcher());
        for (int32_t id = 0; id < tokenizer_->vocab_size(); ++id)
          if (expected[id] != c.Allowed(id)) {
            ADD_FAILURE() << "token " << id << " '" << tokenizer_->TokenBytes(id) << "': walk says " << c.Allowed(id)
                          << " after: " << r.text;
            return r;
          }
      }
      for (float& x : logits) x = normal(rng);
      c.Apply(logits, &masked);
      int32_t token = sampler.Next(masked);
      if (!c.Allowed(token)) token = engine::Argmax(masked);
      EXPECT_TRUE(c.Accept(token).ok());
      if (tokenizer_->IsEndOfGeneration(token)) {
        r.ended = true;
        break;
      }
      r.text += tokenizer_->TokenBytes(token);
      if (c.matcher().Finished()) {
        r.ended = true;
        break;
      }
    }
    return r;
  }

  // The reply as the server reads it: only tool calls of `allowed` tools
  // (all tools when empty), between 1 and max_calls of them.
  static void ExpectCalls(const Reply& r, bool reasoning_open, const std::vector<std::string>& allowed, int max_calls) {
    ASSERT_TRUE(r.ended) << "no end after " << r.tokens << " tokens: " << r.text;
    OutputParser::Options o;
    o.reasoning_open = reasoning_open;
    o.parse_tool_calls = true;
    o.tools = testing::ToolChoiceTools();
    OutputParser parser(o);
    std::vector<OutputEvent> events = parser.Feed(r.text);
    for (OutputEvent& e : parser.Finish()) events.push_back(std::move(e));
    int calls = 0;
    for (const OutputEvent& e : events) {
      if (e.kind == OutputEvent::Kind::kReasoning) continue;
      ASSERT_EQ(e.kind, OutputEvent::Kind::kToolCall) << "text outside calls: '" << e.text << "' in: " << r.text;
      ++calls;
      if (!allowed.empty()) {
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), e.call.name), allowed.end()) << e.call.name;
      }
      const json* schema = testing::ToolSchema(o.tools, e.call.name);
      ASSERT_NE(schema, nullptr) << e.call.name;
      std::string why;
      EXPECT_TRUE(testing::SatisfiesSchema(*schema, e.call.arguments, &why)) << why << ": " << e.call.arguments.dump()
                                                                               << "\nfrom: " << r.text;
    }
    EXPECT_GE(calls, 1) << r.text;
    EXPECT_LE(calls, max_calls) << r.text;
  }

  static std::shared_ptr<const ToolGrammar> Grammar(ToolCallFormat f, std::vector<std::string> allowed, int max_calls,
                                                    bool reasoning_open = false, int64_t think = 0) {
    ToolGrammarOptions o;
    o.format = f;
    o.max_calls = max_calls;
    o.max_string_bytes = 48;
    o.reasoning_open = reasoning_open;
    o.think_max_bytes = think;
    auto g = ToolGrammar::Compile(testing::ToolChoiceTools(), allowed, o);
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return *g;
  }

  static text::Tokenizer* tokenizer_;
  static std::shared_ptr<const TokenConstraintVocab> vocab_;
};
text::Tokenizer* TokenConstraintTest::tokenizer_ = nullptr;
std::shared_ptr<const TokenConstraintVocab> TokenConstraintTest::vocab_;

TEST_F(TokenConstraintTest, TrieWalkMatchesBruteForce) {
  for (ToolCallFormat f : {ToolCallFormat::kXml, ToolCallFormat::kJson}) {
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      Reply r = Sample(Grammar(f, {}, 2, f == ToolCallFormat::kXml, 24), seed, /*brute_force=*/true);
      ExpectCalls(r, f == ToolCallFormat::kXml, {}, 2);
    }
  }
}

// Replies written to pass through the states the fast paths treat apart:
// '<' and partial terminators inside text, escapes, multi-byte characters.
TEST_F(TokenConstraintTest, TeacherForcedRepliesMatchBruteForce) {
  std::string text = "a <b> </p </para </t </tool x</ \xe4\xb8\xad\xe6\x96\x87 <</";
  std::string json_text = "a <b> <\\/p \\n\\t\\u00e9 \xe4\xb8\xad\xe6\x96\x87 \\\"q\\\" <<\\/";
  struct Case {
    ToolCallFormat format;
    std::string reply;
  } cases[] = {
      {ToolCallFormat::kXml, "\n</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\n" + text +
                                 "\n</parameter>\n</function>\n</tool_call>"},
      {ToolCallFormat::kJson, "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"" + json_text +
                                  "\"}}\n</tool_call>"},
  };
  for (const Case& c : cases) {
    ToolGrammarOptions o;
    o.format = c.format;
    o.reasoning_open = c.format == ToolCallFormat::kXml;
    auto g = ToolGrammar::Compile(testing::ToolChoiceTools(), {}, o);
    ASSERT_TRUE(g.ok());
    TokenConstraint tc(*g, vocab_);
    for (int32_t id : tokenizer_->Encode(c.reply, {.parse_special = true})) {
      ASSERT_TRUE(tc.ComputeMask().ok());
      std::vector<bool> expected = BruteForce(tc.matcher());
      for (int32_t t = 0; t < tokenizer_->vocab_size(); ++t)
        ASSERT_EQ(expected[t], tc.Allowed(t)) << "token '" << tokenizer_->TokenBytes(t) << "' before '"
                                              << tokenizer_->TokenBytes(id) << "' in " << c.reply;
      ASSERT_TRUE(tc.Accept(id).ok()) << "'" << tokenizer_->TokenBytes(id) << "' in " << c.reply;
    }
    ASSERT_TRUE(tc.ComputeMask().ok());
    EXPECT_TRUE(tc.Allowed(tokenizer_->eos_id()));
  }
}

TEST_F(TokenConstraintTest, RandomSamplingAlwaysYieldsValidCalls) {
  for (ToolCallFormat f : {ToolCallFormat::kXml, ToolCallFormat::kJson}) {
    for (uint64_t seed = 10; seed < 30; ++seed) {
      bool think = seed % 2 == 0;
      std::vector<std::string> allowed;
      if (seed % 3 == 0) allowed = {"set_mode"};
      int max_calls = allowed.empty() ? 3 : 1;
      Reply r = Sample(Grammar(f, allowed, max_calls, think, seed % 4 == 0 ? 16 : 0), seed, false);
      ExpectCalls(r, think, allowed, max_calls);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST_F(TokenConstraintTest, MaskAllowsOnlyEndOnceFinished) {
  auto g = Grammar(ToolCallFormat::kXml, {"read_file"}, 1);
  TokenConstraint c(g, vocab_);
  for (int32_t id : tokenizer_->Encode("<tool_call>\n<function=read_file>\n<parameter=path>\nx\n</parameter>\n</function>\n</tool_call>",
                                      {.parse_special = true})) {
    ASSERT_TRUE(c.ComputeMask().ok());
    ASSERT_TRUE(c.Accept(id).ok()) << id;
  }
  ASSERT_TRUE(c.ComputeMask().ok());
  EXPECT_EQ(c.num_allowed(), static_cast<int64_t>(vocab_->end_tokens().size()));
  EXPECT_TRUE(c.Allowed(tokenizer_->eos_id()));
  EXPECT_FALSE(c.Accept(tokenizer_->Encode("a")[0]).ok());
}

}  // namespace
}  // namespace lineage::server
