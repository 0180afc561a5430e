#include "text/chat_template.h"

#include <algorithm>
#include <vector>

namespace lineage {

size_t CommonPrefixBytes(std::string_view a, std::string_view b) {
  size_t n = 0;
  size_t limit = std::min(a.size(), b.size());
  while (n < limit && a[n] == b[n]) ++n;
  // Do not split a multi-byte character: back off over continuation bytes.
  if (n < a.size() || n < b.size()) {
    while (n > 0 && n < a.size() && (static_cast<unsigned char>(a[n]) & 0xc0) == 0x80) --n;
    while (n > 0 && n < b.size() && (static_cast<unsigned char>(b[n]) & 0xc0) == 0x80) --n;
  }
  return n;
}

Result<ChatTemplate> ChatTemplate::Create(std::string_view source, std::string bos_token, std::string eos_token) {
  auto t = jinja::Template::Parse(source);
  if (!t.ok()) return t.status().With("chat template");
  return ChatTemplate(std::move(t).value(), std::move(bos_token), std::move(eos_token));
}

nlohmann::ordered_json ChatTemplate::Context(const ChatRequest& request) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = request.messages;
  ctx["tools"] = request.tools;
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = request.add_generation_prompt;
  ctx["bos_token"] = bos_token_;
  ctx["eos_token"] = eos_token_;
  if (request.extra.is_object()) {
    for (auto it = request.extra.begin(); it != request.extra.end(); ++it) ctx[it.key()] = it.value();
  }
  return ctx;
}

Result<std::string> ChatTemplate::Apply(const ChatRequest& request) const {
  if (!request.messages.is_array()) return InvalidArgument("messages must be an array");
  if (!request.tools.is_null() && !request.tools.is_array()) return InvalidArgument("tools must be null or an array");
  if (!request.extra.is_object()) return InvalidArgument("extra template variables must be an object");
  // Converted directly (not through Context()) to avoid a deep copy of the conversation.
  try {
    using jinja::Value;
    auto vars = std::make_shared<jinja::Dict>();
    vars->Set("messages", Value::FromJson(request.messages));
    vars->Set("tools", Value::FromJson(request.tools));
    vars->Set("documents", Value::None());
    vars->Set("add_generation_prompt", Value::Bool(request.add_generation_prompt));
    vars->Set("bos_token", Value::String(bos_token_));
    vars->Set("eos_token", Value::String(eos_token_));
    for (auto it = request.extra.begin(); it != request.extra.end(); ++it) vars->Set(it.key(), Value::FromJson(it.value()));
    if (request.max_output_bytes == 0 || request.max_output_bytes >= options_.limits.max_output_bytes)
      return template_.Render(Value::MakeDict(std::move(vars)), options_);
    jinja::RenderOptions bounded = options_;
    bounded.limits.max_output_bytes = request.max_output_bytes;
    return template_.Render(Value::MakeDict(std::move(vars)), bounded);
  } catch (const jinja::RenderError& e) {
    return InvalidArgument(std::string("chat request: ") + e.what());
  }
}

Result<PrefixText> ChatTemplate::RenderPrefix(const nlohmann::ordered_json& messages,
                                              const nlohmann::ordered_json& tools,
                                              const nlohmann::ordered_json& extra) const {
  if (!messages.is_array()) return InvalidArgument("messages must be an array");
  nlohmann::ordered_json head = nlohmann::ordered_json::array();
  for (const auto& m : messages) {
    if (!m.is_object() || !m.contains("role") || m["role"] != "system") break;
    head.push_back(m);
  }
  auto with = [&](std::initializer_list<std::pair<const char*, const char*>> turns) {
    ChatRequest r;
    r.messages = head;
    r.tools = tools;
    r.extra = extra;
    r.add_generation_prompt = false;
    for (const auto& [role, content] : turns) r.messages.push_back({{"role", role}, {"content", content}});
    return r;
  };
  // Probe texts differ from their first character so that the common prefix
  // stops where the first user turn's content starts.
  const ChatRequest probes[] = {
      with({{"user", "Alpha probe question"}}),
      with({{"user", "Bravo probe question"}}),
      with({{"user", "Charlie probe"}, {"assistant", "Delta reply"}, {"user", "Echo probe"}}),
  };
  std::vector<std::string> texts;
  Status first_error;
  for (const ChatRequest& p : probes) {
    auto r = Apply(p);
    if (r.ok()) texts.push_back(std::move(r).value());
    else if (first_error.ok()) first_error = r.status();
  }
  if (texts.empty()) return first_error.With("rendering the anchor prefix");
  size_t shared = texts[0].size();
  for (size_t k = 1; k < texts.size(); ++k) shared = std::min(shared, CommonPrefixBytes(texts[0], texts[k]));
  if (texts.size() == 1) {
    // One probe alone cannot show where the user's text starts: fall back
    // to what the system-and-tools-only rendering shares with it.
    shared = 0;
  }
  PrefixText out;
  ChatRequest alone;
  alone.messages = head;
  alone.tools = tools;
  alone.extra = extra;
  alone.add_generation_prompt = false;
  auto r = Apply(alone);
  if (r.ok()) {
    out.text = std::move(r).value();
    if (texts.size() == 1) shared = texts[0].size();
    out.shared_chars = std::min(shared, CommonPrefixBytes(out.text, texts[0]));
  } else {
    out.text = texts[0].substr(0, shared);
    out.shared_chars = shared;
  }
  return out;
}

Result<size_t> ChatTemplate::HistoryEnd(const ChatRequest& request) const {
  ChatRequest with_prompt = request;
  with_prompt.add_generation_prompt = true;
  ChatRequest without = request;
  without.add_generation_prompt = false;
  LINEAGE_ASSIGN_OR_RETURN(std::string a, Apply(with_prompt));
  LINEAGE_ASSIGN_OR_RETURN(std::string b, Apply(without));
  return CommonPrefixBytes(a, b);
}

}  // namespace lineage
