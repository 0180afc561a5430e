// ToolGrammar: the language of a reply that must call tools, compiled once
// per request from its tools and tool_choice (docs/server.md, "Enforced tool
// calls"). It is byte-level: ToolMatcher (tool_matcher.h) walks it one byte
// at a time, and TokenConstraint lifts that to tokens.
//
// A reply in the language is, for the model's format:
//   [think-close] ws <tool_call> BODY </tool_call> ( ws <tool_call> BODY </tool_call> )* END
//   XML  BODY: ws <function=NAME> ( ws <parameter=P> VALUE )* ws </function> ws
//        VALUE: "\n" TEXT "</parameter>" for a text parameter (the schema type
//        is "string" or absent: the parser keeps it text), else ws JSON ws
//        "</parameter>"; TEXT never contains "</parameter>" or "</tool_call>".
//   JSON BODY: ws {"name": "NAME", "arguments": ARGS} ws   (ws allowed between tokens)
// with NAME one of the allowed tools, P and the keys of ARGS among the
// tool's declared properties, each at most once, in any order, every
// required one present before the object closes; values follow the schema
// (string with maxLength, number, integer, boolean, null, enum/const, array
// with items, minItems, maxItems, object with properties; anything else is
// any JSON value). JSON strings
// never contain "</" (written "<\/" instead), so no string can end a block
// early. Every run the model could loop in is bounded (whitespace, digits,
// strings, think text, calls, nesting depth), and every bound leaves a way
// to finish, so the language has no dead ends.
//
// A JSON reply (CompileJsonReply: OpenAI response_format json_object or
// json_schema) is one value of the schema and nothing after it:
//   [think-close] ws VALUE END
//
// Think: when the prompt ends inside <think>, the reply first closes it:
// ws TEXT "</think>" with TEXT at most think_max_bytes (0: closed at once).
//
// Immutable after Compile; shared by the request's matchers on any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace lineage::server {

enum class ToolCallFormat { kXml, kJson };

struct ToolGrammarOptions {
  ToolCallFormat format = ToolCallFormat::kXml;
  bool reasoning_open = false;      // the prompt ends inside <think>
  int64_t think_max_bytes = 0;      // reasoning text before </think>; 0 closes it at once
  int max_calls = 1;                // calls in one reply (>= 1)
  int64_t max_string_bytes = 16384; // a JSON string's body or an XML text value
  int max_whitespace = 20;          // whitespace bytes between two tokens of the grammar
};

// Bit per JSON type a schema node admits.
enum JsonTypeBit : uint8_t {
  kTypeString = 1, kTypeNumber = 2, kTypeInteger = 4, kTypeBoolean = 8,
  kTypeNull = 16, kTypeObject = 32, kTypeArray = 64, kTypeAny = 127,
};

// A set of byte strings matched together (sorted, so candidates sharing a
// prefix are contiguous); ids[i] is what matching items[i] means to the caller.
struct LiteralSet {
  std::vector<std::string> items;
  std::vector<int32_t> ids;
};

// How an XML parameter's value is written.
enum class XmlValueKind : uint8_t { kJson, kText, kTextEnum };

struct SchemaProperty {
  std::string name;
  int32_t node = 0;
  XmlValueKind xml_kind = XmlValueKind::kJson;
  int32_t xml_enum_set = -1;  // kTextEnum: "\nVALUE\n</parameter>" items
};

struct SchemaNode {
  uint8_t types = kTypeAny;
  int32_t enum_set = -1;           // values as JSON text; when set, the value is one of them
  int64_t max_string_bytes = -1;   // maxLength, applied to bytes (stricter); -1: the grammar's limit
  // Objects: declared properties (at most 64) or any keys.
  std::vector<SchemaProperty> properties;
  bool any_keys = true;            // no declared properties: any key, any value
  uint64_t required_mask = 0;      // bit i: properties[i] is required
  int32_t key_set = -1;            // "\"key\"" items, ids = property index
  int32_t xml_key_set = -1;        // "key>" items, ids = property index
  // Arrays.
  int32_t items = 0;               // node of the items (0: any)
  int64_t min_items = 0;
  int64_t max_items = -1;          // -1: unbounded
};

struct GrammarTool {
  std::string name;
  int32_t params = 0;  // an object node
};

class ToolGrammar {
 public:
  // `tools`: OpenAI function form. `allowed`: the names a call may use
  // (empty: every tool). kInvalidArgument when there are no tools or an
  // allowed name is not among them, or a tool's schema uses a keyword the
  // grammar reads with a value of the wrong type (the error names its path).
  static Result<std::shared_ptr<const ToolGrammar>> Compile(const nlohmann::ordered_json& tools,
                                                            const std::vector<std::string>& allowed,
                                                            const ToolGrammarOptions& options);

  // A reply that is one JSON value following `schema` (null: any object).
  // kInvalidArgument when the schema uses a keyword the grammar reads with a
  // value of the wrong type.
  static Result<std::shared_ptr<const ToolGrammar>> CompileJsonReply(const nlohmann::ordered_json& schema,
                                                                     const ToolGrammarOptions& options);

  // Steps of the top-level sequence (see ToolMatcher).
  enum class StepKind : uint8_t { kThink, kLiteral, kName, kArguments, kCallEnd, kValue, kEnd };
  struct Step {
    StepKind kind;
    int32_t literal_set = -1;  // kLiteral
    bool ws_before = true;
  };

  const ToolGrammarOptions& options() const { return options_; }
  const std::vector<Step>& steps() const { return steps_; }
  int32_t call_open_step() const { return call_open_step_; }  // the <tool_call> step (-1: none)
  int32_t reply_node() const { return reply_node_; }          // the kValue step's schema
  const SchemaNode& node(int32_t i) const { return nodes_[i]; }
  // The byte limit of a string (or XML text) of node i.
  int64_t string_limit(int32_t i) const {
    int64_t own = nodes_[i].max_string_bytes;
    return own >= 0 ? std::min(own, options_.max_string_bytes) : options_.max_string_bytes;
  }
  const LiteralSet& literal_set(int32_t i) const { return sets_[i]; }
  const GrammarTool& tool(int32_t i) const { return tools_[i]; }
  int32_t name_set() const { return name_set_; }
  // Fixed literals used by the matcher.
  int32_t bool_set() const { return bool_set_; }
  int32_t null_set() const { return null_set_; }
  int32_t xml_next_set() const { return xml_next_set_; }        // "<parameter=" (id 0) | "</function>" (id 1)
  int32_t param_end_set() const { return param_end_set_; }      // "</parameter>"
  int32_t newline_set() const { return newline_set_; }          // "\n"
  int32_t call_open_set() const { return call_open_set_; }      // "<tool_call>"

  // Raw text words: a text ends at its terminator and may not contain the
  // others. Every word starts with '<' and has no other '<'.
  static constexpr const char* kThinkEnd = "</think>";
  static constexpr const char* kParamEnd = "</parameter>";
  static constexpr const char* kCallEnd = "</tool_call>";

 private:
  ToolGrammar() = default;
  int32_t AddSet(std::vector<std::string> items, std::vector<int32_t> ids);
  int32_t AddLiteral(std::string text) { return AddSet({std::move(text)}, {0}); }
  // `path` locates `schema` inside the tool's parameters, for errors.
  Result<int32_t> CompileNode(const nlohmann::ordered_json& schema, int depth, const std::string& path);
  // The grammar's options (clamped) and its fixed literal sets.
  static std::shared_ptr<ToolGrammar> Start(const ToolGrammarOptions& options);
  void CompileXmlKinds(int32_t node_index, const nlohmann::ordered_json& tools, const std::string& tool_name);

  ToolGrammarOptions options_;
  std::vector<Step> steps_;
  int32_t call_open_step_ = -1;
  int32_t reply_node_ = 0;
  std::vector<SchemaNode> nodes_;
  std::vector<LiteralSet> sets_;
  std::vector<GrammarTool> tools_;
  int32_t name_set_ = -1, bool_set_ = -1, null_set_ = -1, xml_next_set_ = -1, param_end_set_ = -1,
          newline_set_ = -1, call_open_set_ = -1;
};

}  // namespace lineage::server
