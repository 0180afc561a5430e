// OutputParser: splits the model's decoded text, piece by piece, into
// reasoning, visible content and tool calls.
//
//   <think> REASONING </think> CONTENT <tool_call> BODY </tool_call> ...
//
// - Reasoning is the text between <think> and </think>. Thinking templates
//   put <think> in the generation prompt, so a parser may start inside it
//   (Options::reasoning_open). A <think> is recognised only before any
//   visible content.
// - Each <tool_call> block is parsed when it closes (tool_call_parse.h); one
//   that does not parse is passed through as content, never dropped.
// - Whitespace that frames a block (the newlines around tags) is removed:
//   leading whitespace of each block, and trailing whitespace before a tag
//   or the end. To do that while streaming, trailing whitespace and any
//   suffix that may begin a tag are held back until the next piece decides.
// The concatenation of the events therefore never depends on how the text
// was cut into pieces. Not thread-safe; one per response.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/tools/tool_call_parse.h"

namespace lineage::server {

struct OutputEvent {
  enum class Kind { kReasoning, kContent, kToolCall };
  Kind kind = Kind::kContent;
  std::string text;  // kReasoning, kContent
  ToolCall call;     // kToolCall
};

class OutputParser {
 public:
  struct Options {
    bool reasoning_open = false;    // the prompt ended inside <think>
    bool parse_tool_calls = false;  // the request offered tools
    nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // for typing XML arguments
  };
  explicit OutputParser(Options options);

  // Appends `text` (valid UTF-8) and returns the events it completes.
  std::vector<OutputEvent> Feed(std::string_view text);
  // End of output: returns what was held back.
  std::vector<OutputEvent> Finish();
  // Inside a reasoning block (<think> ... </think>) after the text fed so far.
  bool in_reasoning() const { return state_ == State::kReasoning; }

 private:
  enum class State { kContent, kReasoning, kToolCall };
  void Step(std::vector<OutputEvent>* out, bool at_end);
  void EmitText(std::string_view text, std::vector<OutputEvent>* out);
  void EnterState(State s);

  Options options_;
  State state_;
  std::string buffer_;        // text not yet turned into events
  bool block_start_ = true;   // leading whitespace of the current block is dropped
  bool seen_content_ = false; // visible content emitted (ends <think> recognition)
};

}  // namespace lineage::server
