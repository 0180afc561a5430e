// From a request to its grammar: which tool-call format each real chat
// template (shared test data) shows the model, and how tool_choice and
// parallel_tool_calls shape the grammar.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/tools/tool_grammar_request.h"
#include "server/tools/tool_matcher.h"
#include "text/chat_template.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

TEST(ToolChoiceRequestTest, FormatFromTheRealTemplates) {
  struct Case {
    const char* file;
    ToolCallFormat format;
  } cases[] = {{"Qwen3.5-4B.jinja", ToolCallFormat::kXml},         {"Qwen3-Coder.jinja", ToolCallFormat::kXml},
               {"Qwen-Qwen3-0.6B.jinja", ToolCallFormat::kJson},   {"Qwen-Qwen2.5-7B-Instruct.jinja", ToolCallFormat::kJson},
               {"Qwen-QwQ-32B.jinja", ToolCallFormat::kJson}};
  for (const Case& c : cases) {
    std::string path = std::string(LINEAGE_SHARED_DATA) + "/templates/" + c.file;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto t = ChatTemplate::Create(ss.str(), "", "<|im_end|>");
    ASSERT_TRUE(t.ok()) << c.file << ": " << t.status().ToString();
    ChatRequest r;
    r.messages = json::array({{{"role", "user"}, {"content", "hi"}}});
    r.tools = testing::ToolChoiceTools();
    auto text = t->Apply(r);
    ASSERT_TRUE(text.ok()) << c.file << ": " << text.status().ToString();
    EXPECT_EQ(DetectToolCallFormat(*text), c.format) << c.file;
  }
}

ApiRequest Request(ToolChoice choice, std::string name = "") {
  ApiRequest r;
  r.messages = json::array({{{"role", "user"}, {"content", "hi"}}});
  r.tools = testing::ToolChoiceTools();
  r.tool_choice = choice;
  r.tool_choice_name = std::move(name);
  return r;
}

// Calls of read_file the grammar takes one after another.
int CallsAccepted(const ToolGrammar& g, int calls) {
  ToolMatcher m(&g);
  std::string call = "\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
  int n = 0;
  while (n < calls && m.Advance(call)) ++n;
  return n;
}

TEST(ToolChoiceRequestTest, ChoiceShapesTheGrammar) {
  auto none = ReplyGrammarForRequest(Request(ToolChoice::kAuto), "", false);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  EXPECT_EQ(*ReplyGrammarForRequest(Request(ToolChoice::kNone), "", false), nullptr);

  auto required = ReplyGrammarForRequest(Request(ToolChoice::kRequired), "", false);
  ASSERT_TRUE(required.ok() && *required);
  EXPECT_EQ((*required)->options().format, ToolCallFormat::kJson);
  EXPECT_EQ(CallsAccepted(**required, 20), kMaxParallelCalls);

  ApiRequest single = Request(ToolChoice::kRequired);
  single.parallel_tool_calls = false;
  EXPECT_EQ(CallsAccepted(**ReplyGrammarForRequest(single, "", false), 3), 1);

  auto named = ReplyGrammarForRequest(Request(ToolChoice::kNamed, "set_mode"), "", false);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(CallsAccepted(**named, 3), 0);  // read_file is not the named tool

  EXPECT_FALSE(ReplyGrammarForRequest(Request(ToolChoice::kNamed, "rm_rf"), "", false).ok());
  ApiRequest no_tools = Request(ToolChoice::kRequired);
  no_tools.tools = json::array();
  EXPECT_FALSE(ReplyGrammarForRequest(no_tools, "", false).ok());

  auto thinking = ReplyGrammarForRequest(Request(ToolChoice::kRequired), "<tool_call>\n<function=x>", true);
  ASSERT_TRUE(thinking.ok());
  EXPECT_EQ((*thinking)->options().format, ToolCallFormat::kXml);
  ToolMatcher m(thinking->get());
  EXPECT_TRUE(m.Advance(std::string_view("\n</think>\n\n<tool_call>")));
}

}  // namespace
}  // namespace lineage::server
