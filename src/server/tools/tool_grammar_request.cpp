#include "server/tools/tool_grammar_request.h"

namespace lineage::server {

ToolCallFormat DetectToolCallFormat(std::string_view rendered_prompt) {
  return rendered_prompt.find("<tool_call>\n<function=") != std::string_view::npos ? ToolCallFormat::kXml
                                                                                  : ToolCallFormat::kJson;
}

Result<std::shared_ptr<const ToolGrammar>> ReplyGrammarForRequest(const ApiRequest& request, std::string_view rendered_prompt,
                                                                  bool reasoning_open) {
  bool required = request.tool_choice == ToolChoice::kRequired;
  bool named = request.tool_choice == ToolChoice::kNamed;
  if (!request.is_chat() || (!required && !named)) {
    if (request.reply_format == ReplyFormat::kText) return std::shared_ptr<const ToolGrammar>();
    ToolGrammarOptions o;
    o.reasoning_open = reasoning_open;
    o.think_max_bytes = kToolThinkMaxBytes;
    Result<std::shared_ptr<const ToolGrammar>> g = ToolGrammar::CompileJsonReply(
        request.reply_format == ReplyFormat::kJsonSchema ? request.reply_schema : nlohmann::ordered_json(), o);
    if (!g.ok()) return InvalidArgument("response_format: " + g.status().message());
    return g;
  }
  ToolGrammarOptions o;
  o.format = DetectToolCallFormat(rendered_prompt);
  o.reasoning_open = reasoning_open;
  o.think_max_bytes = kToolThinkMaxBytes;
  o.max_calls = named || !request.parallel_tool_calls ? 1 : kMaxParallelCalls;
  std::vector<std::string> allowed;
  if (named) allowed.push_back(request.tool_choice_name);
  return ToolGrammar::Compile(request.tools, allowed, o);
}

}  // namespace lineage::server
