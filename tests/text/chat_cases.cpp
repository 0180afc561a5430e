#include "chat_cases.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lineage::testing {
namespace {

using J = nlohmann::ordered_json;

J Msg(const char* role, J content) { return J{{"role", role}, {"content", std::move(content)}}; }

J ToolCall(const char* id, const char* name, J arguments) {
  return J{{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", std::move(arguments)}}}};
}

J Assistant(J content, J tool_calls = nullptr, J reasoning = nullptr) {
  J m = {{"role", "assistant"}, {"content", std::move(content)}};
  if (!reasoning.is_null()) m["reasoning_content"] = std::move(reasoning);
  if (!tool_calls.is_null()) m["tool_calls"] = std::move(tool_calls);
  return m;
}

J ToolResult(const char* id, const char* name, const char* content) {
  return J{{"role", "tool"}, {"tool_call_id", id}, {"name", name}, {"content", content}};
}

struct Base {
  std::string name;
  J messages;
  J tools;
  J extra = J::object();
};

std::vector<Base> Bases() {
  const J tools = SampleTools();
  const char* kSystem = "You are a careful assistant.\nAnswer briefly.";
  const J weather_args = {{"city", "Paris"}, {"unit", "celsius"}, {"days", 3}};
  const J search_args = {{"query", "héllo \"world\""}, {"filters", {{"lang", "fr"}, {"max", 2.5}}},
                         {"tags", {"a", "b"}}, {"exact", true}, {"limit", nullptr}};
  std::vector<Base> b;
  b.push_back({"user_only", J::array({Msg("user", "Hello!")}), nullptr});
  b.push_back({"system_user", J::array({Msg("system", kSystem), Msg("user", "What is 2+2?")}), nullptr});
  b.push_back({"multi_turn",
               J::array({Msg("system", kSystem), Msg("user", "Hi"), Assistant("Hello! How can I help?"),
                         Msg("user", "Tell me a joke."), Assistant("Why did the chicken cross the road?"),
                         Msg("user", "Why?")}),
               nullptr});
  b.push_back({"reasoning",
               J::array({Msg("user", "Think about 3*7."), Assistant("It is 21.", nullptr, "3*7 = 21, easy."),
                         Msg("user", "And 4*8?"), Assistant("32.", nullptr, "4*8 is 32.")}),
               nullptr});
  b.push_back({"inline_think",
               J::array({Msg("system", kSystem), Msg("user", "Q1"),
                         Assistant("<think>\nfirst thoughts\n</think>\n\nAnswer one."), Msg("user", "Q2")}),
               nullptr});
  b.push_back({"tools_system_user", J::array({Msg("system", kSystem), Msg("user", "Weather in Paris?")}), tools});
  b.push_back({"tools_user_only", J::array({Msg("user", "Weather in Paris?")}), tools});
  b.push_back({"tool_call_object",
               J::array({Msg("system", kSystem), Msg("user", "Weather in Paris?"),
                         Assistant("", J::array({ToolCall("call00001", "get_weather", weather_args)})),
                         ToolResult("call00001", "get_weather", "{\"temp\": 21, \"sky\": \"clear\"}"),
                         Assistant("It is 21 degrees and clear."), Msg("user", "Thanks!")}),
               tools});
  b.push_back({"tool_call_string_args",
               J::array({Msg("user", "Search for it."),
                         Assistant(nullptr, J::array({ToolCall("call00002", "search", search_args.dump())})),
                         ToolResult("call00002", "search", "no results")}),
               tools});
  b.push_back({"tool_call_pending",
               J::array({Msg("system", kSystem), Msg("user", "Search, then weather."),
                         Assistant("Let me look.",
                                   J::array({ToolCall("call00003", "search", search_args),
                                             ToolCall("call00004", "get_weather", weather_args)}),
                                   "I need two tools."),
                         ToolResult("call00003", "search", "result A"),
                         ToolResult("call00004", "get_weather", "sunny")}),
               tools});
  b.push_back({"unicode",
               J::array({Msg("system", "Système: réponds en français 🇫🇷\t«ok»"),
                         Msg("user", "  Ünïcödé — 世界 🎉 'single' \"double\" \\back\\slash {{ not jinja }} {% no %}  "),
                         Assistant("\u00a0Réponse: <b>bold</b> & more\u00a0"), Msg("user", "\n\nline\n\n")}),
               nullptr});
  b.push_back({"system_not_first", J::array({Msg("user", "Hi"), Msg("system", "Late system."), Msg("user", "Hi again")}),
               nullptr});
  b.push_back({"assistant_last",
               J::array({Msg("user", "Say hi."), Assistant("Hi!", nullptr, "Greeting requested.")}), nullptr});
  b.push_back({"content_parts",
               J::array({Msg("user", J::array({J{{"type", "text"}, {"text", "Part one. "}},
                                               J{{"type", "text"}, {"text", "Part two."}}}))}),
               nullptr});
  b.push_back({"gpt_oss_kwargs", J::array({Msg("system", kSystem), Msg("user", "Browse?")}), tools,
               J{{"reasoning_effort", "high"}, {"builtin_tools", {"browser", "python"}}, {"model_identity", "You are a test."}}});
  b.push_back({"empty", J::array(), nullptr});
  b.push_back({"assistant_null_content",
               J::array({Msg("user", "Hi"), Assistant(nullptr), Msg("user", "Still there?")}), nullptr});
  b.push_back({"tool_content_parts",
               J::array({Msg("user", "Weather?"),
                         Assistant("", J::array({ToolCall("call00005", "get_weather", weather_args)})),
                         J{{"role", "tool"}, {"tool_call_id", "call00005"},
                           {"content", J::array({J{{"type", "text"}, {"text", "rainy"}}})}}}),
               tools});
  b.push_back({"named_messages",
               J::array({J{{"role", "system"}, {"content", kSystem}, {"name", "policy"}},
                         J{{"role", "user"}, {"content", "Hello from Ann"}, {"name", "ann"}}}),
               nullptr});
  b.push_back({"llama_kwargs", J::array({Msg("system", kSystem), Msg("user", "Weather in Paris?")}), tools,
               J{{"date_string", "01 Feb 2026"}, {"tools_in_user_message", false}, {"truncate_history_thinking", false},
                 {"clear_thinking", false}}});
  b.push_back({"agent_loop",
               J::array({Msg("system", kSystem), Msg("user", "Fix the bug."),
                         Assistant("Reading.", J::array({ToolCall("call00006", "search", search_args)}), "Look first."),
                         ToolResult("call00006", "search", "line 3: off by one"),
                         Msg("user", "<tool_response>\nextra context\n</tool_response>"),
                         Assistant("Patching.", J::array({ToolCall("call00007", "get_weather", weather_args)}), "Now patch."),
                         ToolResult("call00007", "get_weather", "ok"),
                         Assistant("<think>\nverify\n</think>\n\nDone: fixed the off-by-one.")}),
               tools});
  return b;
}

}  // namespace

J SampleTools() {
  J weather = {
      {"type", "function"},
      {"function",
       {{"name", "get_weather"},
        {"description", "Get the weather for a city."},
        {"parameters",
         {{"type", "object"},
          {"properties",
           {{"city", {{"type", "string"}, {"description", "City name, e.g. Paris"}}},
            {"unit", {{"type", "string"}, {"enum", {"celsius", "fahrenheit"}}, {"default", "celsius"}}},
            {"days", {{"type", "integer"}, {"description", "Forecast days"}, {"default", 1}}}}},
          {"required", {"city"}}}}}}};
  J search = {
      {"type", "function"},
      {"function",
       {{"name", "search"},
        {"description", "Search the web — fast.\n  Returns snippets. "},
        {"parameters",
         {{"type", "object"},
          {"properties",
           {{"query", {{"type", "string"}, {"description", "The query"}}},
            {"filters",
             {{"type", "object"},
              {"properties", {{"lang", {{"type", "string"}}}, {"max", {{"type", "number"}, {"nullable", true}}}}},
              {"required", {"lang"}}}},
            {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"points", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"x", {{"type", "number"}}}}}}}}},
            {"exact", {{"type", "boolean"}, {"default", false}}},
            {"limit", {{"type", {"integer", "null"}}, {"default", 0.5}}}}},
          {"required", {"query"}},
          {"additionalProperties", false}}}}}};
  return J::array({weather, search});
}

std::string RealTemplateDir() { return std::string(LINEAGE_SHARED_DATA) + "/templates"; }

std::map<std::string, std::string> LoadRealTemplates() {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  if (!fs::is_directory(RealTemplateDir())) return out;
  for (const auto& e : fs::directory_iterator(RealTemplateDir())) {
    if (e.path().extension() != ".jinja") continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    out[e.path().stem().string()] = ss.str();
  }
  return out;
}

std::tm FixedNow() {
  std::tm t{};
  t.tm_year = 2026 - 1900;
  t.tm_mon = 0;
  t.tm_mday = 15;
  t.tm_hour = 10;
  t.tm_min = 30;
  t.tm_sec = 5;
  t.tm_wday = 4;  // a Thursday
  t.tm_yday = 14;
  return t;
}

std::vector<ChatCase> MakeChatCases() {
  std::vector<ChatCase> cases;
  for (const Base& b : Bases()) {
    for (bool gen : {true, false}) {
      for (int thinking : {-1, 0, 1}) {  // absent, false, true
        ChatCase c;
        c.name = b.name + (gen ? "/gen" : "/nogen") + (thinking < 0 ? "" : thinking ? "/think" : "/nothink");
        c.request.messages = b.messages;
        c.request.tools = b.tools;
        c.request.add_generation_prompt = gen;
        c.request.extra = b.extra;
        if (thinking >= 0) c.request.extra["enable_thinking"] = thinking == 1;
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace lineage::testing
