#include "server/tool_grammar_request.h"

namespace lineage::server {

ToolCallFormat DetectToolCallFormat(std::string_view rendered_prompt) {
  return rendered_prompt.find("<tool_call>\n<function=") != std::string_view::npos ? ToolCallFormat::kXml
                                                                                  : ToolCallFormat::kJson;
}

Result<std::shared_ptr<const ToolGrammar>> ToolGrammarForRequest(const ApiRequest& request, std::string_view rendered_prompt,
                                                                 bool reasoning_open) {
  bool required = request.tool_choice == ToolChoice::kRequired;
  bool named = request.tool_choice == ToolChoice::kNamed;
  if (!request.is_chat() || (!required && !named)) return std::shared_ptr<const ToolGrammar>();
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
