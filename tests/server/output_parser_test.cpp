#include <gtest/gtest.h>

#include "server/replies/output_parser.h"
#include "server/replies/stop_matcher.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

json Tools() {
  return json::parse(R"([{"type": "function", "function": {"name": "read", "parameters": {"type": "object",
      "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}, "opts": {"type": "object"},
                     "note": {"type": ["string", "null"]}}}}}])");
}

// A compact transcript of events: R(...) reasoning, C(...) content, T(name args) tool call.
std::string Transcript(const std::vector<OutputEvent>& events) {
  std::string out;
  for (const OutputEvent& e : events) {
    switch (e.kind) {
      case OutputEvent::Kind::kReasoning: out += "R(" + e.text + ")"; break;
      case OutputEvent::Kind::kContent: out += "C(" + e.text + ")"; break;
      case OutputEvent::Kind::kToolCall: out += "T(" + e.call.name + " " + e.call.arguments.dump() + ")"; break;
    }
  }
  return out;
}

// Merges adjacent events of one kind, so transcripts of different splits compare equal.
std::vector<OutputEvent> Merge(const std::vector<OutputEvent>& events) {
  std::vector<OutputEvent> out;
  for (const OutputEvent& e : events) {
    if (!out.empty() && e.kind != OutputEvent::Kind::kToolCall && out.back().kind == e.kind) out.back().text += e.text;
    else out.push_back(e);
  }
  return out;
}

std::vector<OutputEvent> ParseWhole(const std::string& text, OutputParser::Options o) {
  OutputParser p(std::move(o));
  auto events = p.Feed(text);
  auto tail = p.Finish();
  events.insert(events.end(), tail.begin(), tail.end());
  return Merge(events);
}

OutputParser::Options WithTools(bool reasoning_open = false) {
  OutputParser::Options o;
  o.parse_tool_calls = true;
  o.tools = Tools();
  o.reasoning_open = reasoning_open;
  return o;
}

// The text below is what the Qwen3.5 chat template renders for an assistant
// turn with reasoning, content and two tool calls (see the template's
// tool_call loop: "\n\n<tool_call>\n<function=NAME>\n<parameter=K>\nV\n
// </parameter>\n</function>\n</tool_call>", non-strings via tojson).
TEST(OutputParser, ParsesQwen35XmlToolCallsAfterReasoning) {
  std::string text =
      "Let me look.\n</think>\n\nI will read it.\n\n<tool_call>\n<function=read>\n<parameter=path>\n/tmp/a b.txt\n"
      "</parameter>\n<parameter=limit>\n20\n</parameter>\n<parameter=opts>\n{\"raw\": true}\n</parameter>\n"
      "</function>\n</tool_call>\n<tool_call>\n<function=read>\n<parameter=path>\n42\n</parameter>\n"
      "<parameter=note>\nline one\nline two\n</parameter>\n</function>\n</tool_call>";
  auto events = ParseWhole(text, WithTools(/*reasoning_open=*/true));
  EXPECT_EQ(Transcript(events),
            "R(Let me look.)C(I will read it.)"
            "T(read {\"path\":\"/tmp/a b.txt\",\"limit\":20,\"opts\":{\"raw\":true}})"
            "T(read {\"path\":\"42\",\"note\":\"line one\\nline two\"})");
}

TEST(OutputParser, ParsesQwen3JsonToolCalls) {
  std::string text =
      "<think>\nplan\n</think>\n\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"x\"}}\n</tool_call>";
  EXPECT_EQ(Transcript(ParseWhole(text, WithTools())), "R(plan)T(read {\"path\":\"x\"})");
  // Arguments given as a JSON string are accepted too.
  EXPECT_EQ(Transcript(ParseWhole("<tool_call>{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}</tool_call>", WithTools())),
            "T(f {\"a\":1})");
}

TEST(OutputParser, MalformedToolCallIsKeptAsContent) {
  std::string text = "x <tool_call>\nnot a call\n</tool_call> y";
  EXPECT_EQ(Transcript(ParseWhole(text, WithTools())), "C(x<tool_call>\nnot a call\n</tool_call> y)");
  // An unterminated call that parses is still a call at the end of output.
  EXPECT_EQ(Transcript(ParseWhole("<tool_call>\n<function=read>\n<parameter=path>\np\n</parameter>\n", WithTools())),
            "T(read {\"path\":\"p\"})");
}

TEST(OutputParser, WithoutToolsTagsAreText) {
  OutputParser::Options o;
  EXPECT_EQ(Transcript(ParseWhole("a <tool_call>{\"name\":\"f\"}</tool_call>", o)),
            "C(a <tool_call>{\"name\":\"f\"}</tool_call>)");
}

TEST(OutputParser, ThinkOnlyBeforeContent) {
  OutputParser::Options o;
  EXPECT_EQ(Transcript(ParseWhole("\n<think>a</think>b", o)), "R(a)C(b)");
  EXPECT_EQ(Transcript(ParseWhole("b <think>a</think>", o)), "C(b <think>a</think>)");
  // An unclosed reasoning block stays reasoning (the model ran out of tokens).
  EXPECT_EQ(Transcript(ParseWhole("thinking on", OutputParser::Options{true, false, json::array()})),
            "R(thinking on)");
}

TEST(OutputParser, InteriorWhitespaceIsKept) {
  OutputParser::Options o;
  EXPECT_EQ(Transcript(ParseWhole("  a \n\n b  \n", o)), "C(a \n\n b)");
}

// Whatever the piece boundaries, the merged events are the same.
TEST(OutputParser, EverySplitGivesTheSameEvents) {
  std::string text =
      "chain of\nthought\n</think>\n\nAnswer: <b>bold</b> <tool text\n\n<tool_call>\n<function=read>\n<parameter=path>\n"
      "p\n</parameter>\n</function>\n</tool_call>\ntrailing";
  std::string whole = Transcript(ParseWhole(text, WithTools(true)));
  EXPECT_EQ(whole, "R(chain of\nthought)C(Answer: <b>bold</b> <tool text)T(read {\"path\":\"p\"})C(trailing)");
  for (size_t i = 0; i <= text.size(); ++i) {
    for (size_t j = i; j <= text.size(); j += 3) {
      OutputParser p(WithTools(true));
      std::vector<OutputEvent> events;
      for (auto piece : {text.substr(0, i), text.substr(i, j - i), text.substr(j)}) {
        auto ev = p.Feed(piece);
        events.insert(events.end(), ev.begin(), ev.end());
      }
      auto tail = p.Finish();
      events.insert(events.end(), tail.begin(), tail.end());
      ASSERT_EQ(Transcript(Merge(events)), whole) << "split at " << i << "," << j;
    }
  }
}

TEST(OutputParser, StreamsContentBeforeTheEnd) {
  OutputParser p(WithTools());
  EXPECT_EQ(Transcript(p.Feed("Hello wor")), "C(Hello wor)");
  EXPECT_EQ(Transcript(p.Feed("ld <tool")), "C(ld)");       // " <tool" may open a call: held
  EXPECT_EQ(Transcript(p.Feed("s are fun")), "C( <tools are fun)");
}

TEST(StopMatcher, FindsStopsAcrossPieces) {
  StopMatcher m({"STOP", "\n\n"});
  std::string out = m.Feed("abc ST");
  EXPECT_EQ(out, "abc ");
  out = m.Feed("OP tail");
  EXPECT_EQ(out, "");
  ASSERT_TRUE(m.matched().has_value());
  EXPECT_EQ(*m.matched(), "STOP");
  EXPECT_EQ(m.Feed("more"), "");
}

TEST(StopMatcher, ReleasesHeldTextWhenNoMatch) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.Feed("xS"), "x");
  EXPECT_EQ(m.Feed("T"), "");
  EXPECT_EQ(m.Feed("x"), "STx");
  EXPECT_EQ(m.Feed("ST"), "");
  EXPECT_EQ(m.Finish(), "ST");
  EXPECT_FALSE(m.matched().has_value());
}

TEST(StopMatcher, EarliestMatchWins) {
  StopMatcher m({"cd", "bcde"});
  EXPECT_EQ(m.Feed("abcdef"), "a");
  EXPECT_EQ(*m.matched(), "bcde");
}

}  // namespace
}  // namespace lineage::server
