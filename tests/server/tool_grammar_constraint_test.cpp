// The tool-call grammar byte by byte: hand-written replies it must accept
// (and that the output parser reads back as the same call) and ones it must
// refuse, at the byte where they go wrong.
#include <gtest/gtest.h>

#include <random>

#include "server/tools/tool_call_parse.h"
#include "server/tools/tool_grammar.h"
#include "server/tools/tool_matcher.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

std::shared_ptr<const ToolGrammar> Grammar(ToolCallFormat format, std::vector<std::string> allowed = {},
                                           ToolGrammarOptions o = {}) {
  o.format = format;
  auto g = ToolGrammar::Compile(testing::ToolChoiceTools(), allowed, o);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : nullptr;
}

// Bytes accepted before the first refusal; text.size() when all are.
size_t Accepted(const ToolGrammar& g, std::string_view text, bool* accepting = nullptr) {
  ToolMatcher m(&g);
  for (size_t i = 0; i < text.size(); ++i)
    if (!m.Advance(static_cast<uint8_t>(text[i]))) return i;
  if (accepting) *accepting = m.Accepting();
  return text.size();
}

void ExpectComplete(const ToolGrammar& g, const std::string& text) {
  bool accepting = false;
  size_t n = Accepted(g, text, &accepting);
  EXPECT_EQ(n, text.size()) << "refused at byte " << n << " of: " << text << "\nafter: " << text.substr(0, n);
  EXPECT_TRUE(accepting) << text;
}

// `ok` is accepted and the first byte of `bad` after it is refused.
void ExpectRefused(const ToolGrammar& g, const std::string& ok, const std::string& bad) {
  EXPECT_EQ(Accepted(g, ok + bad), ok.size()) << ok << "|" << bad;
}

std::string Body(const std::string& reply) {
  size_t b = reply.find("<tool_call>") + 11;
  return reply.substr(b, reply.find("</tool_call>") - b);
}

TEST(ToolGrammarTest, XmlCallIsAcceptedAndParsesBack) {
  auto g = Grammar(ToolCallFormat::kXml);
  std::string reply =
      "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/a <b>.cc\n</parameter>\n"
      "<parameter=limit>\n42\n</parameter>\n</function>\n</tool_call>";
  ExpectComplete(*g, reply);
  auto call = ParseToolCallBody(Body(reply), testing::ToolChoiceTools());
  ASSERT_TRUE(call.ok());
  EXPECT_EQ(call->name, "read_file");
  EXPECT_EQ(call->arguments, json({{"path", "src/a <b>.cc"}, {"limit", 42}}));
}

TEST(ToolGrammarTest, XmlTypedValuesEnumsAndAnyOrder) {
  auto g = Grammar(ToolCallFormat::kXml);
  std::string reply =
      "<tool_call>\n<function=set_mode>\n<parameter=verbose>\ntrue\n</parameter>\n"
      "<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n<parameter=mode>\nslow\n</parameter>\n"
      "<parameter=extra>\n{\"a\": null}\n</parameter>\n<parameter=anything>\nfree <i>text</i>\n</parameter>\n"
      "</function>\n</tool_call>";
  ExpectComplete(*g, reply);
  auto call = ParseToolCallBody(Body(reply), testing::ToolChoiceTools());
  ASSERT_TRUE(call.ok());
  EXPECT_EQ(call->arguments["mode"], "slow");
  EXPECT_EQ(call->arguments["tags"], json({"a", "b"}));
  EXPECT_EQ(call->arguments["verbose"], true);
}

TEST(ToolGrammarTest, XmlRefusals) {
  auto g = Grammar(ToolCallFormat::kXml);
  const std::string open = "<tool_call>\n<function=";
  const std::string read = open + "read_file>\n", mode = open + "set_mode>\n";
  ExpectRefused(*g, "", "Sure.<tool_call>");
  ExpectRefused(*g, open, "write_file>");
  ExpectRefused(*g, open + "read_file", "x>");
  // A required parameter is missing: only <parameter= may follow.
  ExpectRefused(*g, read + "<parameter=limit>\n4\n</parameter>\n<", "/function>");
  ExpectRefused(*g, read + "<parameter=limit>\n4", ".5\n</parameter>");
  ExpectRefused(*g, read + "<parameter=", "size>");
  ExpectRefused(*g, read + "<parameter=path>\na\n</parameter>\n<parameter=", "path>");
  ExpectRefused(*g, read + "<parameter=path>\na</tool_call", ">");
  ExpectRefused(*g, mode + "<parameter=mode>\n", "medium\n</parameter>");
  ExpectRefused(*g, mode + "<parameter=tags>\n[\"a\", \"b\", \"c\"", ", \"d\"]");
  ExpectRefused(*g, mode + "<parameter=tags>\n[", "1]");
  ExpectRefused(*g, mode + "<parameter=extra>\n{\"", "b\": 1}");
  // After the one call only the end may come.
  ExpectRefused(*g, read + "<parameter=path>\na\n</parameter>\n</function>\n</tool_call>", "\n");
}

TEST(ToolGrammarTest, ParallelCallsAndNamedChoice) {
  std::string one = "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>";
  std::string two = "<tool_call>\n<function=set_mode>\n<parameter=mode>\nfast\n</parameter>\n"
                    "<parameter=verbose>\nfalse\n</parameter>\n</function>\n</tool_call>";
  ToolGrammarOptions o;
  o.max_calls = 2;
  auto g = Grammar(ToolCallFormat::kXml, {}, o);
  ExpectComplete(*g, one);
  ExpectComplete(*g, one + "\n" + two);
  ExpectRefused(*g, one + "\n" + two, "\n<");
  auto named = Grammar(ToolCallFormat::kXml, {"set_mode"});
  ExpectComplete(*named, two);
  ExpectRefused(*named, "<tool_call>\n<function=", "read_file>");
  bool accepting = true;
  Accepted(*named, "", &accepting);
  EXPECT_FALSE(accepting);  // at least one call
  EXPECT_FALSE(ToolGrammar::Compile(testing::ToolChoiceTools(), {"nope"}, o).ok());
  EXPECT_FALSE(ToolGrammar::Compile(json::array(), {}, o).ok());
}

TEST(ToolGrammarTest, ThinkIsClosedFirst) {
  std::string call = "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>";
  ToolGrammarOptions o;
  o.reasoning_open = true;
  auto closed = Grammar(ToolCallFormat::kXml, {}, o);
  ExpectComplete(*closed, "\n</think>\n\n" + call);
  ExpectRefused(*closed, "", "hmm</think>\n" + call);
  ExpectRefused(*closed, "<", call.substr(1));
  ExpectRefused(*closed, "</th", "<</think>");  // no restart once the terminator is under way
  o.think_max_bytes = 10;
  auto bounded = Grammar(ToolCallFormat::kXml, {}, o);
  ExpectComplete(*bounded, "hmm <b>\n</think>\n\n" + call);
  ExpectRefused(*bounded, "0123456789", "x</think>");
  ExpectComplete(*bounded, "0123456789</think>" + call);
}

TEST(ToolGrammarTest, JsonCallIsAcceptedAndParsesBack) {
  auto g = Grammar(ToolCallFormat::kJson);
  std::string reply =
      "<tool_call>\n{\"name\": \"set_mode\", \"arguments\": {\"mode\": \"fast\", \"verbose\": true, "
      "\"ratio\": -1.5e3, \"tags\": [\"x\", \"caf\\u00e9 \xc3\xa9 <\\/b>\"], \"extra\": {\"a\": null}, "
      "\"anything\": {\"k\": [1, {\"y\": \"z\"}, false]}}}\n</tool_call>";
  ExpectComplete(*g, reply);
  auto call = ParseToolCallBody(Body(reply), testing::ToolChoiceTools());
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->name, "set_mode");
  EXPECT_EQ(call->arguments["ratio"], -1500.0);
  EXPECT_EQ(call->arguments["tags"][1], "caf\xc3\xa9 \xc3\xa9 </b>");
}

TEST(ToolGrammarTest, JsonRefusals) {
  auto g = Grammar(ToolCallFormat::kJson);
  const std::string open = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": ";
  ExpectRefused(*g, open + "{\"limit\": 10", "}");
  ExpectRefused(*g, open + "{\"path\": ", "5}");
  ExpectRefused(*g, open + "{\"path\": \"a<", "/b\"}");
  ExpectRefused(*g, open + "{\"path\": \"\\ud", "800\"}");
  ExpectRefused(*g, open + "{\"path\": \"\xc3", "\x28\"}");
  ExpectRefused(*g, open + "{\"path\": \"a", "\nb\"}");
  ExpectRefused(*g, open + "{\"path\": \"a\", \"limit\": 0", "1}");
  ExpectRefused(*g, open + "{\"path\": \"a\", \"", "path\": \"b\"}");
  ExpectRefused(*g, open + "{\"path\": \"a\"," + std::string(20, ' '), " }");
  ExpectRefused(*g, "<tool_call>\n{\"", "arguments\": {}}");
  ExpectRefused(*g, open + "{\"path\": \"a\"}}\n</tool_call>", "x");
  const std::string mode = "<tool_call>\n{\"name\": \"set_mode\", \"arguments\": {\"mode\": ";
  ExpectRefused(*g, mode + "\"", "medium\"");
  ExpectRefused(*g, mode + "\"fast\", \"verbose\": ", "\"yes\"");
  ExpectRefused(*g, mode + "\"fast\"", "}");
  // Numbers stay within a double: two exponent digits at most.
  ExpectRefused(*g, mode + "\"fast\", \"verbose\": true, \"ratio\": -1.5e99", "9}");
}

// A tool of many parameters: the required ones are tracked however many
// others there are (up to 64 required), so a forced call must carry them
// all; more than 64 required is refused when the grammar is built, never
// turned into an unconstrained object.
json WideTool(int properties, int required) {
  json props = json::object(), req = json::array();
  for (int i = 0; i < properties; ++i) {
    props["p" + std::to_string(i)] = {{"type", "integer"}};
    if (i >= properties - required) req.push_back("p" + std::to_string(i));  // the last ones: reordered first
  }
  return json::array({{{"type", "function"},
                       {"function", {{"name", "wide"}, {"parameters", {{"type", "object"}, {"properties", props},
                                                                        {"required", req}}}}}}});
}

TEST(ToolGrammarTest, RequiredPropertiesAreTrackedPastSixtyFour) {
  ToolGrammarOptions o;
  o.format = ToolCallFormat::kJson;
  auto g = ToolGrammar::Compile(WideTool(300, 64), {}, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string open = "<tool_call>\n{\"name\": \"wide\", \"arguments\": ";
  ExpectRefused(**g, open + "{", "}");
  std::string args = "{";
  for (int i = 299; i >= 236; --i) args += (i < 299 ? ", " : "") + std::string("\"p") + std::to_string(i) + "\": 1";
  ExpectRefused(**g, open + args, "x");  // all 64 given: a non-required one may follow, or the end
  ExpectComplete(**g, open + args + ", \"p5\": 2}}\n</tool_call>");
  std::string short_of_one = "{";
  for (int i = 299; i >= 237; --i) short_of_one += (i < 299 ? ", " : "") + std::string("\"p") + std::to_string(i) + "\": 1";
  ExpectRefused(**g, open + short_of_one, "}");  // p236 is still missing
  auto refused = ToolGrammar::Compile(WideTool(300, 65), {}, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("more than 64"), std::string::npos) << refused.status().ToString();
}

TEST(ToolGrammarTest, BoundsLeaveAWayOut) {
  ToolGrammarOptions o;
  o.max_string_bytes = 8;
  auto g = Grammar(ToolCallFormat::kJson, {}, o);
  const std::string open = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"";
  ExpectComplete(*g, open + "12345678\"}}</tool_call>");
  ExpectRefused(*g, open + "12345678", "9\"}}");
  // A two-byte character that would cross the limit is refused whole.
  ExpectRefused(*g, open + "1234567", "\xc3\xa9\"");
  auto x = Grammar(ToolCallFormat::kXml, {}, o);
  const std::string xopen = "<tool_call><function=read_file><parameter=path>\n";
  ExpectComplete(*x, xopen + "1234567</parameter></function></tool_call>");
  ExpectRefused(*x, xopen + "12345678", "x");
  // At the limit inside a forbidden word, the terminator can still start.
  ExpectComplete(*x, xopen + "1234</t</parameter></function></tool_call>");
  ExpectRefused(*x, xopen + "1234567</p", "<</parameter>");
}

// Up to 3000 bytes, each picked uniformly among those the state takes, until
// the grammar is finished or only an end may follow. A state that takes no
// byte and cannot end fails the test.
std::string RandomWalk(const ToolGrammar& g, std::mt19937& rng, bool* accepting) {
  ToolMatcher m(&g);
  std::string text;
  for (int step = 0; step < 3000 && !m.Finished(); ++step) {
    std::vector<uint8_t> allowed;
    for (int b = 0; b < 256; ++b) {
      ToolMatcher copy = m;
      if (copy.Advance(static_cast<uint8_t>(b))) allowed.push_back(static_cast<uint8_t>(b));
    }
    if (allowed.empty()) {
      EXPECT_TRUE(m.Accepting()) << "dead end after: " << text;
      break;
    }
    uint8_t b = allowed[rng() % allowed.size()];
    m.Advance(b);
    text.push_back(static_cast<char>(b));
  }
  *accepting = m.Accepting();
  return text;
}

// Random byte-level walks (each step picks uniformly among the bytes the
// state takes) reach deep nesting, limits and partial words; no state they
// reach is a dead end, and every finished walk parses as calls that satisfy
// their schemas.
TEST(ToolGrammarTest, RandomWalksFindNoDeadEnd) {
  std::mt19937 rng(5);
  int finished = 0;
  for (int walk = 0; walk < 150; ++walk) {
    ToolGrammarOptions o;
    o.max_string_bytes = 12;
    o.max_calls = 2;
    o.reasoning_open = walk % 2 == 0;
    o.think_max_bytes = walk % 4 == 0 ? 6 : 0;
    auto g = Grammar(walk % 3 == 0 ? ToolCallFormat::kJson : ToolCallFormat::kXml, {}, o);
    bool accepting = false;
    std::string text = RandomWalk(*g, rng, &accepting);
    if (!accepting) continue;
    ++finished;
    size_t pos = 0;
    while ((pos = text.find("<tool_call>", pos)) != std::string::npos) {
      size_t end = text.find("</tool_call>", pos);
      ASSERT_NE(end, std::string::npos) << text;
      auto call = ParseToolCallBody(std::string_view(text).substr(pos + 11, end - pos - 11), testing::ToolChoiceTools());
      ASSERT_TRUE(call.ok()) << call.status().ToString() << " in " << text;
      std::string why;
      const json tools = testing::ToolChoiceTools();
      EXPECT_TRUE(testing::SatisfiesSchema(*testing::ToolSchema(tools, call->name), call->arguments, &why))
          << why << " in " << text;
      pos = end;
    }
  }
  EXPECT_GT(finished, 100);
}

std::shared_ptr<const ToolGrammar> Reply(const json& schema, ToolGrammarOptions o = {}) {
  auto g = ToolGrammar::CompileJsonReply(schema, o);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : nullptr;
}

const json kReplySchema = json::parse(R"({"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 10}, "n": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}}, "required": ["name"]})");

TEST(ToolGrammarTest, JsonReplyIsOneValueOfItsSchema) {
  auto any = Reply(json());
  ExpectComplete(*any, "{\"a\": [1, \"x\", {\"b\": null}]}");
  ExpectComplete(*any, "  {}");
  ExpectRefused(*any, "{}", " ");    // nothing after the value
  ExpectRefused(*any, "", "[1]");    // json_object: an object
  ExpectRefused(*any, "", "\"s\"");
  auto g = Reply(kReplySchema);
  ExpectComplete(*g, "{\"n\": -3, \"name\": \"x\", \"tags\": [\"b\"]}");
  ExpectRefused(*g, "{\"n\": 3", "}");           // "name" is required
  ExpectRefused(*g, "{\"n\": 3", ".5");          // an integer
  ExpectRefused(*g, "{\"name\": \"x\", \"", "other\"");  // only declared keys
  ExpectRefused(*g, "{\"name\": \"x\", \"tags\": [\"", "c\"");
  auto list = Reply(json::parse(R"({"type": "array", "items": {"type": "boolean"}})"));
  ExpectComplete(*list, "[true, false]");
  ExpectRefused(*list, "", "{");
  ToolGrammarOptions o;
  o.reasoning_open = true;
  ExpectComplete(*Reply(json(), o), "</think>\n{}");
  // A reply that is a bare number could never end; an enum is not a container.
  EXPECT_FALSE(ToolGrammar::CompileJsonReply(json::parse(R"({"type": "integer"})"), {}).ok());
  EXPECT_FALSE(ToolGrammar::CompileJsonReply(json::parse(R"({"enum": [1, 2]})"), {}).ok());
  EXPECT_FALSE(ToolGrammar::CompileJsonReply(json::parse(R"({"type": "object", "required": "name"})"), {}).ok());
  EXPECT_FALSE(ToolGrammar::CompileJsonReply(json::array(), {}).ok());
}

// Random walks over the reply grammar end in JSON that parses and satisfies
// the schema, and find no dead end on the way.
TEST(ToolGrammarTest, JsonReplyRandomWalksParseAndSatisfyTheSchema) {
  std::mt19937 rng(9);
  ToolGrammarOptions o;
  o.max_string_bytes = 12;
  auto g = Reply(kReplySchema, o);
  int finished = 0;
  for (int walk = 0; walk < 100; ++walk) {
    bool accepting = false;
    std::string text = RandomWalk(*g, rng, &accepting);
    if (!accepting) continue;
    ++finished;
    json value = json::parse(text, nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << text;
    std::string why;
    EXPECT_TRUE(testing::SatisfiesSchema(kReplySchema, value, &why)) << why << " in " << text;
  }
  EXPECT_GT(finished, 80);
}

}  // namespace
}  // namespace lineage::server
