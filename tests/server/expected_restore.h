// What the design says a request restores, computed from the model's own
// chat template and tokenizer, never read back from the server: the tokens
// of a rendered conversation and the anchor length (the system + tools
// prefix, tokenized, shared with the prompt, minus 2 tokens of slack).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/generation/prompt_builder.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace lineage::server::testing {

// The one tool the end-to-end conversations declare.
inline nlohmann::ordered_json ReadFileTool() {
  using json = nlohmann::ordered_json;
  return json::array({{{"type", "function"},
                       {"function", {{"name", "read_file"},
                                     {"description", "Read a file from the workspace"},
                                     {"parameters", {{"type", "object"},
                                                     {"properties", {{"path", {{"type", "string"}}}}},
                                                     {"required", {"path"}}}}}}}});
}

inline std::vector<int32_t> ConversationTokens(const std::string& model_path, const nlohmann::ordered_json& messages,
                                               const nlohmann::ordered_json& tools, bool generation_prompt) {
  auto tok = text::LoadTokenizer(model_path);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
  ChatRequest r;
  r.messages = messages;
  r.tools = tools;
  r.add_generation_prompt = generation_prompt;
  auto text = tmpl->Apply(r);
  EXPECT_TRUE(text.ok());
  return tok->Encode(*text, {.parse_special = true});
}

inline int64_t AnchorTokens(const std::string& model_path, const nlohmann::ordered_json& messages,
                            const nlohmann::ordered_json& tools) {
  auto tok = text::LoadTokenizer(model_path);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
  auto prefix = tmpl->RenderPrefix(messages, tools);
  EXPECT_TRUE(prefix.ok());
  auto anchor = tok->Encode(prefix->text.substr(0, prefix->shared_chars), {.parse_special = true});
  return CommonPrefixTokens(anchor, ConversationTokens(model_path, messages, tools, true)) - 2;
}

}  // namespace lineage::server::testing
