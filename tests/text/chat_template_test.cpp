// ChatTemplate: the anchor prefix and the history-end capture point.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <fstream>
#include <map>

#include "chat_cases.h"
#include "text/chat_template.h"

namespace lineage {
namespace {

using J = nlohmann::ordered_json;

J Msg(const char* role, const char* content) { return J{{"role", role}, {"content", content}}; }

TEST(CommonPrefixBytes, StopsOnCharacterBoundary) {
  EXPECT_EQ(CommonPrefixBytes("abc", "abd"), 2u);
  EXPECT_EQ(CommonPrefixBytes("abc", "abc"), 3u);
  EXPECT_EQ(CommonPrefixBytes("abc", "ab"), 2u);
  EXPECT_EQ(CommonPrefixBytes("a\xc3\xa9", "a\xc3\xa8"), 1u);          // é vs è share a lead byte
  EXPECT_EQ(CommonPrefixBytes("\xe4\xb8\x96x", "\xe4\xb8\x96y"), 3u);  // 世 then differ
  EXPECT_EQ(CommonPrefixBytes("", "x"), 0u);
}

// For every template and every (system prompt, tools) setup, every
// conversation with that setup renders text that starts with the anchor's
// shared characters.
TEST(ChatTemplate, AnchorPrefixIsSharedByEveryConversation) {
  auto templates = testing::LoadRealTemplates();
  if (templates.empty()) GTEST_SKIP() << "no templates under " << LINEAGE_SHARED_DATA;
  const J tools = testing::SampleTools();
  struct Setup {
    const char* name;
    J system;
    J tools;
  } setups[] = {
      {"system", J::array({Msg("system", "You are terse.\nReply in English.")}), nullptr},
      {"system+tools", J::array({Msg("system", "You are terse.")}), tools},
      {"tools", J::array(), tools},
      {"none", J::array(), nullptr},
  };
  auto cases = testing::MakeChatCases();
  int checked = 0;
  for (const auto& [name, source] : templates) {
    auto ct = ChatTemplate::Create(source, "<s>", "</s>");
    ASSERT_TRUE(ct.ok()) << name << ": " << ct.status().ToString();
    ct->set_now(testing::FixedNow());
    for (const Setup& setup : setups) {
      std::map<std::string, Result<PrefixText>> prefixes;  // by extra variables
      for (const auto& c : cases) {
        auto [it, fresh] = prefixes.try_emplace(c.request.extra.dump(), InvalidArgument("unset"));
        if (fresh) it->second = ct->RenderPrefix(setup.system, setup.tools, c.request.extra);
        const Result<PrefixText>& prefix = it->second;
        if (!prefix.ok()) {
          // Only a template that refuses every probe may fail (gemma refuses a system role).
          EXPECT_EQ(name, "google-gemma-2-2b-it") << setup.name << ": " << prefix.status().ToString();
          continue;
        }
        ASSERT_LE(prefix->shared_chars, prefix->text.size());
        const std::string shared = prefix->text.substr(0, prefix->shared_chars);
        ChatRequest r = c.request;
        J rest = J::array();
        for (const auto& m : r.messages) {
          if (m["role"] != "system") rest.push_back(m);
        }
        if (rest.empty() || rest[0]["role"] != "user") continue;
        r.messages = setup.system;
        for (const auto& m : rest) r.messages.push_back(m);
        r.tools = setup.tools;
        auto text = ct->Apply(r);
        if (!text.ok()) continue;  // the template refuses this conversation
        ++checked;
        EXPECT_EQ(text->compare(0, shared.size(), shared), 0)
            << name << " / " << setup.name << " / " << c.name << ": anchor " << J(shared).dump()
            << " is not a prefix of " << J(text->substr(0, shared.size() + 40)).dump();
      }
    }
  }
  std::printf("[ anchor ] %d renderings start with their anchor prefix\n", checked);
  EXPECT_GT(checked, 1000);
}

std::string Qwen35() {
  auto templates = testing::LoadRealTemplates();
  auto it = templates.find("Qwen3.5-4B");
  return it == templates.end() ? std::string() : it->second;
}

TEST(ChatTemplate, Qwen35AnchorCoversSystemAndTools) {
  std::string source = Qwen35();
  if (source.empty()) GTEST_SKIP() << "Qwen3.5-4B.jinja not found";
  auto ct = ChatTemplate::Create(source, "<s>", "</s>");
  ASSERT_TRUE(ct.ok());
  auto prefix = ct->RenderPrefix(J::array({Msg("system", "Be brief."), Msg("user", "ignored")}), testing::SampleTools());
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  const std::string shared = prefix->text.substr(0, prefix->shared_chars);
  // Spec §6.3: tools first, the system text appended after them in the same turn.
  EXPECT_EQ(shared.rfind("<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n", 0), 0u)
      << shared;
  const std::string tail = "\n\nBe brief.<|im_end|>\n<|im_start|>user\n";
  ASSERT_GE(shared.size(), tail.size());
  EXPECT_EQ(shared.substr(shared.size() - tail.size()), tail);
  // Qwen3.5 refuses a conversation without a user turn, so the anchor text
  // is the shared prefix itself.
  EXPECT_EQ(prefix->text, shared);
}

// Spec §6.3 / DESIGN §3.2: Qwen3.5 opens the reply with "<think>\n" but
// renders past replies without it, so the next turn leaves the previous
// prompt a few characters before its end. HistoryEnd marks that point: the
// next turn's rendering must start with the previous prompt up to it.
TEST(ChatTemplate, Qwen35NextTurnStartsWithHistoryEnd) {
  std::string source = Qwen35();
  if (source.empty()) GTEST_SKIP() << "Qwen3.5-4B.jinja not found";
  auto ct = ChatTemplate::Create(source, "<s>", "</s>");
  ASSERT_TRUE(ct.ok());
  for (bool thinking : {true, false}) {
    for (bool with_tools : {false, true}) {
      ChatRequest turn1;
      turn1.messages = J::array({Msg("system", "Be brief."), Msg("user", "What is 6*7?")});
      if (with_tools) turn1.tools = testing::SampleTools();
      turn1.extra["enable_thinking"] = thinking;
      auto prompt1 = ct->Apply(turn1);
      ASSERT_TRUE(prompt1.ok()) << prompt1.status().ToString();
      auto end1 = ct->HistoryEnd(turn1);
      ASSERT_TRUE(end1.ok()) << end1.status().ToString();
      const std::string gen_prompt =
          thinking ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
      EXPECT_EQ(prompt1->substr(*end1), gen_prompt);

      ChatRequest turn2 = turn1;
      J reply = {{"role", "assistant"}, {"content", "42."}};
      if (thinking) reply["reasoning_content"] = "6*7 is 42.";
      turn2.messages.push_back(reply);
      turn2.messages.push_back(Msg("user", "And 7*8?"));
      auto prompt2 = ct->Apply(turn2);
      ASSERT_TRUE(prompt2.ok()) << prompt2.status().ToString();
      EXPECT_EQ(prompt2->compare(0, *end1, *prompt1, 0, *end1), 0)
          << "next turn diverges before the history end: " << J(prompt2->substr(0, *end1 + 20)).dump();
      // The whole previous prompt is not a prefix: that is why the capture
      // point sits at the history end rather than at the prompt end.
      EXPECT_NE(prompt2->compare(0, prompt1->size(), *prompt1), 0);
      EXPECT_EQ(prompt2->substr(*end1, 22), "<|im_start|>assistant\n");
    }
  }
}

TEST(ChatTemplate, HistoryEndIsWhereTheGenerationPromptStarts) {
  auto templates = testing::LoadRealTemplates();
  if (templates.empty()) GTEST_SKIP() << "no templates";
  ChatRequest r;
  r.messages = J::array({Msg("system", "S"), Msg("user", "U")});
  for (const auto& [name, source] : templates) {
    auto ct = ChatTemplate::Create(source, "<s>", "</s>");
    ASSERT_TRUE(ct.ok());
    ct->set_now(testing::FixedNow());
    auto with = ct->Apply(r);
    if (!with.ok()) continue;
    ChatRequest no_gen = r;
    no_gen.add_generation_prompt = false;
    auto without = ct->Apply(no_gen);
    ASSERT_TRUE(without.ok()) << name;
    auto end = ct->HistoryEnd(r);
    ASSERT_TRUE(end.ok()) << name;
    EXPECT_LE(*end, without->size()) << name;
    EXPECT_EQ(with->compare(0, *end, *without, 0, *end), 0) << name;
    // Maximal: the next characters differ (or one rendering ends there).
    if (*end < with->size() && *end < without->size()) {
      EXPECT_NE((*with)[*end], (*without)[*end]) << name;
    }
  }
}

// One ChatTemplate rendered from several threads at once gives the same
// text as alone (a Template is immutable after parsing).
TEST(ChatTemplate, ConcurrentRendersAgree) {
  std::string source = Qwen35();
  if (source.empty()) GTEST_SKIP() << "Qwen3.5-4B.jinja not found";
  auto ct = ChatTemplate::Create(source, "<s>", "</s>");
  ASSERT_TRUE(ct.ok());
  auto cases = testing::MakeChatCases();
  std::vector<std::string> expected;
  for (const auto& c : cases) {
    auto r = ct->Apply(c.request);
    expected.push_back(r.ok() ? *r : "error: " + r.status().ToString());
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t k = 0; k < cases.size(); ++k) {
          size_t i = (k + static_cast<size_t>(t) * 7) % cases.size();
          auto r = ct->Apply(cases[i].request);
          std::string got = r.ok() ? *r : "error: " + r.status().ToString();
          if (got != expected[i]) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ChatTemplate, RejectsMalformedRequests) {
  auto ct = ChatTemplate::Create("{{ messages | length }}", "", "");
  ASSERT_TRUE(ct.ok());
  ChatRequest r;
  r.messages = J::object();
  EXPECT_FALSE(ct->Apply(r).ok());
  r.messages = J::array();
  r.tools = "not a list";
  EXPECT_FALSE(ct->Apply(r).ok());
  auto bad = ChatTemplate::Create("{% if %}", "", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("chat template: 1:7:"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace lineage
