#include "server/api/system_messages.h"

#include <string>

namespace lineage::server {

namespace {
using json = nlohmann::ordered_json;

constexpr const char* kSeparator = "\n\n";

std::string Reminder(const std::string& text) { return "<system-reminder>\n" + text + "\n</system-reminder>\n"; }

bool IsRole(const json& m, const char* role) { return m.is_object() && m.value("role", "") == role; }

// Messages reach the builder with string content (api_request.h); anything
// else is left for the template to judge.
bool HasStringContent(const json& m) { return m.contains("content") && m.at("content").is_string(); }
}  // namespace

json FoldSystemMessages(const json& messages) {
  if (!messages.is_array()) return messages;
  json out = json::array();
  size_t i = 0;
  for (; i < messages.size() && IsRole(messages[i], "system"); ++i) {
    if (out.empty() || !HasStringContent(messages[i]) || !HasStringContent(out.back())) {
      out.push_back(messages[i]);
      continue;
    }
    json& first = out.back();
    first["content"] = first["content"].get<std::string>() + kSeparator + messages[i]["content"].get<std::string>();
  }
  for (; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (!IsRole(m, "system")) {
      out.push_back(m);
      continue;
    }
    std::string text = Reminder(HasStringContent(m) ? m["content"].get<std::string>() : std::string());
    if (!out.empty() && IsRole(out.back(), "user") && HasStringContent(out.back())) {
      json& user = out.back();
      std::string joined = user["content"].get<std::string>();
      if (!joined.empty() && joined.back() != '\n') joined += '\n';
      user["content"] = joined + text;
      continue;
    }
    out.push_back({{"role", "user"}, {"content", text}});
  }
  return out;
}

bool TemplateTakesMidSystem(const ChatTemplate& chat_template) {
  static constexpr const char* kProbe = "lineage-mid-system-probe";
  ChatRequest probe;
  probe.messages = json::array({{{"role", "system"}, {"content", "s"}},
                                {{"role", "user"}, {"content", "u"}},
                                {{"role", "assistant"}, {"content", "a"}},
                                {{"role", "system"}, {"content", kProbe}},
                                {{"role", "user"}, {"content", "v"}}});
  Result<std::string> text = chat_template.Apply(probe);
  return text.ok() && text->find(kProbe) != std::string::npos;
}

}  // namespace lineage::server
