// End to end for coding agents (issue 13) on the random-weight tiny Qwen3.5:
// Claude Code's billing header and mid-conversation system messages, Codex's
// Responses API, the server's cap on generated tokens, and the prefill
// progress log. Expected cache figures come from the chat template and the
// tokenizer directly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "e2e_stack.h"
#include "node_clients.h"
#include "server/api/anthropic_request.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class AgentsEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_agents_e2e_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static EngineBackendOptions Options() {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.max_live = 4;
    bo.scheduler.prefill_chunk_tokens = 128;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    return bo;
  }

  static json Fixture(const std::string& name) {
    std::ifstream in(std::string(LINEAGE_SOURCE_DIR) + "/tests/server/fixtures/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
  }

  // Tokens of the template's system block (system text and tools, up to its
  // <|im_end|>) for a request: what every session of a client shares.
  static int64_t SystemBlockTokens(const ApiRequest& r) {
    auto tok = text::LoadTokenizer(path_);
    auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
    ChatRequest c;
    c.messages = json::array({r.messages[0], {{"role", "user"}, {"content", "x"}}});
    c.tools = r.tools;
    auto text = tmpl->Apply(c);
    EXPECT_TRUE(text.ok());
    std::string block = text->substr(0, text->find("<|im_end|>"));
    return static_cast<int64_t>(tok->Encode(block, {.parse_special = true}).size());
  }

  static std::filesystem::path dir_;
  static std::string path_;
};

std::filesystem::path AgentsEndToEnd::dir_;
std::string AgentsEndToEnd::path_;

TEST_F(AgentsEndToEnd, ClaudeCodeSecondSessionRestoresTheWholeSystemAndToolsFromTheAnchor) {
  ::setenv("LINEAGE_TEST_LOG", "1", 1);
  auto s = testing::StartStack(path_, Options());
  ::unsetenv("LINEAGE_TEST_LOG");
  json s1 = Fixture("claude_code_session1.json");
  json s2 = Fixture("claude_code_session2.json");
  for (json* b : {&s1, &s2}) {
    (*b)["stream"] = false;
    (*b)["max_tokens"] = 2;
    (*b)["temperature"] = 0;
  }
  ::testing::internal::CaptureStderr();
  json r1 = testing::PostJson(*s, "/v1/messages", s1);  // has a mid-conversation system message
  json r2 = testing::PostJson(*s, "/v1/messages", s2);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r1["type"], "message") << r1.dump();
  EXPECT_EQ(r1["usage"]["cache_read_input_tokens"], 0);
  auto parsed = ParseAnthropicMessagesRequest(s2.dump());
  ASSERT_TRUE(parsed.ok());
  // The billing hash differs between the sessions; without it the second
  // session restores the whole system + tools block (the anchor).
  int64_t block = SystemBlockTokens(*parsed);
  EXPECT_GT(block, 300);
  EXPECT_GE(r2["usage"]["cache_read_input_tokens"].get<int64_t>(), block - 2) << r2.dump();
  // The request log says what was done and where the restore came from, in the same words.
  EXPECT_NE(log.find("billing_header=stripped"), std::string::npos) << log;
  size_t second = log.find("req=2 ");
  ASSERT_NE(second, std::string::npos) << log;
  std::string line = log.substr(second, log.find('\n', second) - second);
  EXPECT_NE(line.find("restore=anchor/ram"), std::string::npos) << line;
  EXPECT_NE(line.find("(anchor of entry"), std::string::npos) << line;
  EXPECT_EQ(line.find("entry_end"), std::string::npos) << line;
}

TEST_F(AgentsEndToEnd, CodexNextTurnRestoresThePreviousHistory) {
  auto s = testing::StartStack(path_, Options());
  json t1 = Fixture("codex_turn1.json");
  json t2 = Fixture("codex_turn2.json");
  for (json* b : {&t1, &t2}) {
    (*b)["stream"] = false;
    (*b)["max_output_tokens"] = 2;
    (*b)["temperature"] = 0;
  }
  json r1 = testing::PostJson(*s, "/v1/responses", t1);
  EXPECT_EQ(r1["object"], "response") << r1.dump();
  EXPECT_EQ(r1["status"], "incomplete");  // 2 tokens cannot finish a reply
  json r2 = testing::PostJson(*s, "/v1/responses", t2);
  int64_t prompt1 = r1["usage"]["input_tokens"];
  // Turn 1's prompt up to its generation prompt ("<|im_start|>assistant\n<think>\n").
  EXPECT_GE(r2["usage"]["input_tokens_details"]["cached_tokens"].get<int64_t>(), prompt1 - 8) << r2.dump();
}

TEST_F(AgentsEndToEnd, OpenAiNodeClientResponsesApiGetsCachedTokens) {
  std::string why;
  std::string dir = testing::PrepareNodeClients(&why);
  if (dir.empty()) GTEST_SKIP() << why;
  auto s = testing::StartStack(path_, Options());
  std::string out;
  int rc = testing::RunShell(
      "cd '" + dir + "' && timeout 300 node responses.mjs http://127.0.0.1:" + std::to_string(s->http->port()) + " real",
      &out);
  EXPECT_EQ(rc, 0) << out;
  size_t at = out.find("cached2=");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_GT(std::atoll(out.c_str() + at + 8), 50) << out;  // the system + tools block at least
}

TEST_F(AgentsEndToEnd, NPredictCapsEveryRequest) {
  EngineBackendOptions o = Options();
  o.max_predict_tokens = 3;
  auto s = testing::StartStack(path_, o);
  json chat = {{"messages", {{{"role", "user"}, {"content", "Write a long story."}}}}, {"temperature", 0}};
  json asked = chat;
  asked["max_tokens"] = 40;
  for (const json& body : {chat, asked}) {
    json r = testing::PostJson(*s, "/v1/chat/completions", body);
    EXPECT_LE(r["usage"]["completion_tokens"].get<int64_t>(), 3) << r.dump();
  }
  json m = testing::PostJson(*s, "/v1/messages",
                             {{"max_tokens", 32000}, {"messages", {{{"role", "user"}, {"content", "Go on."}}}}});
  EXPECT_LE(m["usage"]["output_tokens"].get<int64_t>(), 3) << m.dump();
  // A request asking for fewer keeps its own limit.
  asked["max_tokens"] = 1;
  EXPECT_EQ(testing::PostJson(*s, "/v1/chat/completions", asked)["usage"]["completion_tokens"], 1);
}

TEST_F(AgentsEndToEnd, LongPrefillLogsItsProgress) {
  EngineBackendOptions o = Options();
  o.scheduler.prefill_chunk_tokens = 64;
  o.scheduler.prefill_log_interval = std::chrono::milliseconds(1);
  auto lines = std::make_shared<std::vector<std::string>>();
  auto mu = std::make_shared<std::mutex>();
  o.scheduler.log = [lines, mu](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mu);
    lines->push_back(line);
  };
  auto s = testing::StartStack(path_, o);
  std::string text;
  for (int i = 0; i < 80; ++i) text += "line " + std::to_string(i) + " of a long file\n";
  json r = testing::PostJson(*s, "/v1/chat/completions",
                             {{"messages", {{{"role", "user"}, {"content", text}}}}, {"max_tokens", 1}});
  int64_t prompt = r["usage"]["prompt_tokens"];
  ASSERT_GT(prompt, 3 * 64);
  std::lock_guard<std::mutex> lock(*mu);
  ASSERT_GE(lines->size(), 2u);
  EXPECT_NE(lines->front().find("prefill 64/" + std::to_string(prompt) + " tokens"), std::string::npos)
      << lines->front();
  EXPECT_NE(lines->front().find("tokens/s"), std::string::npos) << lines->front();
}

}  // namespace
}  // namespace lineage::server
