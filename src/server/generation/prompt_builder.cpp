#include "server/generation/prompt_builder.h"

#include <algorithm>
#include <cstdint>

#include "cache/cache_options.h"
#include "server/api/system_messages.h"

namespace lineage::server {

namespace {

bool EndsInsideThink(const std::string& text) {
  size_t open = text.rfind("<think>");
  return open != std::string::npos && text.find("</think>", open) == std::string::npos;
}
}  // namespace

int64_t CommonPrefixTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

PromptBuilder::PromptBuilder(text::Tokenizer tokenizer, std::optional<ChatTemplate> chat_template,
                             PromptBuilderOptions options)
    : tokenizer_(std::move(tokenizer)), template_(std::move(chat_template)), options_(options) {
  fold_system_ = template_ && !TemplateTakesMidSystem(*template_);
  for (int64_t id = 0; id < tokenizer_.vocab_size(); ++id)
    longest_token_bytes_ = std::max(longest_token_bytes_, tokenizer_.TokenBytes(static_cast<int32_t>(id)).size());
}

size_t PromptBuilder::MaxRenderedBytes(int64_t max_tokens) const {
  // A token stands for at most its own bytes of normalised text, and NFC
  // shrinks text by at most 3x (three Hangul jamo compose to one syllable):
  // 4x leaves room. 0 = no bound of our own (the template's limit applies).
  constexpr size_t kNormalisationSlack = 4;
  constexpr size_t kNoBound = 0;
  if (max_tokens <= 0 || max_tokens == INT64_MAX || longest_token_bytes_ == 0) return kNoBound;
  size_t per_token = longest_token_bytes_ * kNormalisationSlack;
  if (static_cast<uint64_t>(max_tokens) > SIZE_MAX / per_token) return kNoBound;
  return static_cast<size_t>(max_tokens) * per_token;
}

nlohmann::ordered_json PromptBuilder::TemplateMessages(const ApiRequest& request) const {
  nlohmann::ordered_json messages = request.messages;
  if (options_.keep_billing_header && !request.billing_header.empty()) {
    // Back where the client put it: the first text of the system prompt.
    if (!messages.empty() && messages[0].value("role", "") == "system" && messages[0]["content"].is_string())
      messages[0]["content"] = request.billing_header + messages[0]["content"].get<std::string>();
    else
      messages.insert(messages.begin(), nlohmann::ordered_json{{"role", "system"}, {"content", request.billing_header}});
  }
  return fold_system_ ? FoldSystemMessages(messages) : messages;
}

size_t PromptBuilder::anchor_memo_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return memo_.size();
}

std::vector<int32_t> PromptBuilder::AnchorTokens(const std::string& prefix_text) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = memo_.begin(); it != memo_.end(); ++it) {
      if (it->first == prefix_text) {
        memo_.splice(memo_.begin(), memo_, it);
        return memo_.front().second;
      }
    }
  }
  std::vector<int32_t> tokens = tokenizer_.Encode(prefix_text, {.parse_special = true});
  std::lock_guard<std::mutex> lock(mu_);
  memo_.emplace_front(prefix_text, tokens);
  if (memo_.size() > kAnchorMemoEntries) memo_.pop_back();
  return tokens;
}

Result<BuiltPrompt> PromptBuilder::Build(const ApiRequest& request, int64_t max_tokens) const {
  BuiltPrompt out;
  size_t limit = max_tokens < 0 ? 0 : static_cast<size_t>(max_tokens);
  auto too_long = [&] {
    return OutOfRange("the prompt has more than " + std::to_string(max_tokens) + " tokens; the context holds " +
                      std::to_string(max_tokens));
  };
  if (!request.is_chat()) {
    out.text = request.prompt;
    out.tokens = tokenizer_.Encode(request.prompt, {.parse_special = true, .add_special = true, .max_tokens = limit});
    if (out.tokens.empty()) return InvalidArgument("the prompt is empty");
    if (out.tokens.size() > limit) return too_long();
    return out;
  }
  if (!template_) return InvalidArgument("the model has no chat template; use /v1/completions or --chat-template-file");
  ChatRequest chat;
  chat.messages = TemplateMessages(request);
  chat.tools = request.tools.empty() ? nlohmann::ordered_json() : request.tools;
  chat.extra = request.template_kwargs;
  chat.add_generation_prompt = true;
  chat.max_output_bytes = MaxRenderedBytes(max_tokens);
  Result<std::string> text = template_->Apply(chat);
  if (!text.ok() && text.status().code() == StatusCode::kOutOfRange && chat.max_output_bytes > 0) return too_long();
  if (!text.ok()) return InvalidArgument("chat template: " + text.status().message());
  out.text = std::move(text).value();
  Result<size_t> history_end = template_->HistoryEnd(chat);
  size_t split = history_end.ok() ? std::min(*history_end, out.text.size()) : out.text.size();
  tokenizer_.EncodeAppend(std::string_view(out.text).substr(0, split), {.parse_special = true, .max_tokens = limit},
                          &out.tokens);
  if (out.tokens.size() > limit) return too_long();
  out.history_end_tokens = history_end.ok() ? static_cast<int64_t>(out.tokens.size()) : 0;
  tokenizer_.EncodeAppend(std::string_view(out.text).substr(split), {.parse_special = true, .max_tokens = limit},
                          &out.tokens);
  if (out.tokens.size() > limit) return too_long();
  if (out.tokens.empty()) return InvalidArgument("the rendered prompt is empty");
  if (out.history_end_tokens >= static_cast<int64_t>(out.tokens.size())) out.history_end_tokens = 0;
  out.reasoning_open = EndsInsideThink(out.text);

  bool has_system = !chat.messages.empty() && chat.messages[0].value("role", "") == "system";
  if (has_system || !request.tools.empty()) {
    // The cache anchors a little before each (LookupHints).
    // `covered`: the share of the prefix's own tokens the prompt starts with.
    auto shared_with_prompt = [&](const nlohmann::ordered_json& tools, double* covered) -> int64_t {
      Result<PrefixText> prefix = template_->RenderPrefix(chat.messages, tools);
      if (!prefix.ok() || prefix->shared_chars == 0) return 0;
      const std::vector<int32_t> tokens = AnchorTokens(prefix->text.substr(0, prefix->shared_chars));
      const int64_t shared = CommonPrefixTokens(tokens, out.tokens);
      if (covered) *covered = tokens.empty() ? 0.0 : static_cast<double>(shared) / static_cast<double>(tokens.size());
      return shared;
    };
    out.anchor_tokens = shared_with_prompt(chat.tools, nullptr);
    if (has_system && !request.tools.empty()) {
      // Where the template puts the tools first (Qwen3.5's, GLM's, Kimi's),
      // the prompt leaves the system-only rendering in its first line.
      double covered = 0;
      const int64_t system_end = shared_with_prompt(nlohmann::ordered_json(), &covered);
      if (system_end < out.anchor_tokens && covered >= 0.5) out.system_end_tokens = system_end;
    }
  }
  return out;
}

}  // namespace lineage::server
