// Where system messages go when the chat template does not take them
// mid-conversation (Qwen3.5 raises "System message must be at the
// beginning"), while agents send them there: Claude Code's
// mid-conversation system messages, Codex's developer messages after its
// instructions.
//
// FoldSystemMessages rewrites the HF-shaped message list (api_request.h):
//   - consecutive leading system messages become one, texts joined by a
//     blank line;
//   - a later system message becomes "<system-reminder>\nTEXT\n</system-reminder>\n"
//     appended to the user message right before it (after a newline), or a
//     user message of its own when the message before it is not a user
//     message. This is how Claude Code itself folds one into a user turn
//     when it re-sends a conversation, so both forms render alike.
// Each message's rendering depends only on the messages before it, so a
// conversation that grows by appending keeps its earlier prompt text (and
// tokens) unchanged: the prompt cache still restores it.
//
// TemplateTakesMidSystem renders one probe conversation to learn whether
// the template keeps a system message after the first user turn. Pure
// functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "text/chat_template.h"

namespace lineage::server {

nlohmann::ordered_json FoldSystemMessages(const nlohmann::ordered_json& messages);

bool TemplateTakesMidSystem(const ChatTemplate& chat_template);

}  // namespace lineage::server
