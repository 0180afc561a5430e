#include "server/tools/tool_grammar.h"

#include <algorithm>
#include <numeric>

#include "server/tools/tool_call_parse.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// Schemas nested deeper than this are any JSON value below it: the matcher's
// frame stack is bounded (tool_matcher.h).
constexpr int kMaxSchemaDepth = 10;
// An object's first 64 properties have a bit each in its "used" mask (the
// required ones are put first); past 64, keys are still constrained to the
// declared names, but a repeat of one of them is not excluded. More than 64
// required properties cannot be tracked: such a schema is refused.
constexpr size_t kTrackedProperties = 64;
constexpr size_t kMaxProperties = 4096;

uint8_t TypeBit(const std::string& t) {
  if (t == "string") return kTypeString;
  if (t == "number") return kTypeNumber | kTypeInteger;  // an integer is a number
  if (t == "integer") return kTypeInteger;
  if (t == "boolean") return kTypeBoolean;
  if (t == "null") return kTypeNull;
  if (t == "object") return kTypeObject;
  if (t == "array") return kTypeArray;
  return 0;
}

std::string Sub(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// The keywords the grammar reads from one schema node, checked before use: a
// schema the grammar cannot follow is the client's error, named by its path.
Status CheckSchemaKeywords(const json& schema, const std::string& path) {
  for (const char* count : {"minItems", "maxItems", "minLength", "maxLength"}) {
    auto it = schema.find(count);
    if (it == schema.end()) continue;
    bool ok = it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0);
    if (!ok)
      return InvalidArgument("'" + Sub(path, count) + "' must be a non-negative integer, got " + it->dump());
  }
  if (auto it = schema.find("type"); it != schema.end()) {
    bool ok = it->is_string() || (it->is_array() && std::all_of(it->begin(), it->end(), [](const json& t) { return t.is_string(); }));
    if (!ok) return InvalidArgument("'" + Sub(path, "type") + "' must be a string or an array of strings, got " + it->dump());
  }
  if (auto it = schema.find("required"); it != schema.end()) {
    bool ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const json& t) { return t.is_string(); });
    if (!ok) return InvalidArgument("'" + Sub(path, "required") + "' must be an array of strings, got " + it->dump());
  }
  if (auto it = schema.find("properties"); it != schema.end() && !it->is_object())
    return InvalidArgument("'" + Sub(path, "properties") + "' must be an object, got " + it->dump());
  if (auto it = schema.find("enum"); it != schema.end() && !it->is_array())
    return InvalidArgument("'" + Sub(path, "enum") + "' must be an array, got " + it->dump());
  return Status::Ok();
}

// A count keyword already checked by CheckSchemaKeywords, clamped to int64.
int64_t CountOf(const json& schema, const char* key, int64_t absent) {
  auto it = schema.find(key);
  if (it == schema.end()) return absent;
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return INT64_MAX;
  return it->get<int64_t>();
}

const json* FunctionOf(const json& tool) {
  const json* f = tool.contains("function") ? &tool.at("function") : &tool;
  return f->is_object() && f->contains("name") && f->at("name").is_string() ? f : nullptr;
}

}  // namespace

int32_t ToolGrammar::AddSet(std::vector<std::string> items, std::vector<int32_t> ids) {
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a] < items[b]; });
  LiteralSet set;
  for (size_t i : order) {
    set.items.push_back(std::move(items[i]));
    set.ids.push_back(ids[i]);
  }
  sets_.push_back(std::move(set));
  return static_cast<int32_t>(sets_.size() - 1);
}

Result<int32_t> ToolGrammar::CompileNode(const json& schema, int depth, const std::string& path) {
  if (!schema.is_object() || depth > kMaxSchemaDepth) return 0;
  LINEAGE_RETURN_IF_ERROR(CheckSchemaKeywords(schema, path));
  for (const char* unsupported : {"$ref", "anyOf", "oneOf", "allOf", "not", "if", "patternProperties"})
    if (schema.contains(unsupported)) return 0;
  SchemaNode n;
  const json* values = schema.contains("enum") && schema.at("enum").is_array() && !schema.at("enum").empty()
                           ? &schema.at("enum") : nullptr;
  json const_value;
  if (!values && schema.contains("const")) {
    const_value = json::array({schema.at("const")});
    values = &const_value;
  }
  if (values) {
    std::vector<std::string> items;
    for (const json& v : *values) {
      std::string text = v.dump();
      if (v.is_string() && text.find("</") != std::string::npos) return 0;  // strings never hold "</"
      if (std::find(items.begin(), items.end(), text) == items.end()) items.push_back(std::move(text));
    }
    n.enum_set = AddSet(items, std::vector<int32_t>(items.size(), 0));
    nodes_.push_back(std::move(n));
    return static_cast<int32_t>(nodes_.size() - 1);
  }
  const json type = schema.value("type", json());
  if (type.is_string()) {
    n.types = TypeBit(type.get<std::string>());
  } else if (type.is_array()) {
    n.types = 0;
    for (const json& t : type)
      if (t.is_string()) n.types |= TypeBit(t.get<std::string>());
  } else if (schema.contains("properties")) {
    n.types = kTypeObject;
  } else if (schema.contains("items")) {
    n.types = kTypeArray;
  }
  if (n.types == 0) n.types = kTypeAny;
  n.max_string_bytes = CountOf(schema, "maxLength", -1);
  int32_t index = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(n);  // reserved; children are compiled after it
  if (n.types & kTypeObject) {
    const json props = schema.value("properties", json::object());
    bool closed = schema.contains("additionalProperties") && schema.at("additionalProperties") == false;
    if (props.is_object() && props.size() <= kMaxProperties && (!props.empty() || closed)) {
      std::vector<SchemaProperty> properties;
      const json req = schema.value("required", json::array());
      auto is_required = [&](const std::string& name) {
        return req.is_array() && std::find(req.begin(), req.end(), json(name)) != req.end();
      };
      for (const auto& [name, sub] : props.items()) {
        if (json(name).dump().find("</") != std::string::npos) continue;
        SchemaProperty p;
        p.name = name;
        LINEAGE_ASSIGN_OR_RETURN(p.node, CompileNode(sub, depth + 1, Sub(path, "properties." + name)));
        properties.push_back(std::move(p));
      }
      // Required properties first, so that their bits are the tracked ones.
      std::stable_partition(properties.begin(), properties.end(),
                            [&](const SchemaProperty& p) { return is_required(p.name); });
      uint64_t required = 0;
      for (size_t i = 0; i < properties.size(); ++i) {
        if (!is_required(properties[i].name)) continue;
        if (i >= kTrackedProperties)
          return InvalidArgument("'" + Sub(path, "required") + "' names more than " +
                                 std::to_string(kTrackedProperties) +
                                 " properties, more than a constrained call can track");
        required |= uint64_t{1} << i;
      }
      std::vector<std::string> keys, xml_keys;
      std::vector<int32_t> ids;
      for (size_t i = 0; i < properties.size(); ++i) {
        keys.push_back(json(properties[i].name).dump());
        xml_keys.push_back(properties[i].name + ">");
        ids.push_back(static_cast<int32_t>(i));
      }
      SchemaNode& self = nodes_[index];
      self.any_keys = false;
      self.properties = std::move(properties);
      self.required_mask = required;
      self.key_set = AddSet(keys, ids);
      self.xml_key_set = AddSet(xml_keys, ids);
    }
  }
  if (n.types & kTypeArray) {
    int32_t items = 0;
    if (schema.contains("items")) {
      LINEAGE_ASSIGN_OR_RETURN(items, CompileNode(schema.at("items"), depth + 1, Sub(path, "items")));
    }
    SchemaNode& self = nodes_[index];
    self.items = items;
    self.min_items = CountOf(schema, "minItems", 0);
    self.max_items = CountOf(schema, "maxItems", -1);
    if (self.max_items >= 0 && self.max_items < self.min_items) self.max_items = self.min_items;
  }
  return index;
}

std::shared_ptr<ToolGrammar> ToolGrammar::Start(const ToolGrammarOptions& options) {
  std::shared_ptr<ToolGrammar> g(new ToolGrammar());
  g->options_ = options;
  g->options_.max_calls = std::max(1, options.max_calls);
  g->options_.max_string_bytes = std::max<int64_t>(8, options.max_string_bytes);
  g->options_.think_max_bytes = std::max<int64_t>(0, options.think_max_bytes);
  g->options_.max_whitespace = std::max(1, options.max_whitespace);
  g->nodes_.push_back(SchemaNode{});  // node 0: any JSON value
  g->bool_set_ = g->AddSet({"true", "false"}, {0, 0});
  g->null_set_ = g->AddLiteral("null");
  g->xml_next_set_ = g->AddSet({"<parameter=", "</function>"}, {0, 1});
  g->param_end_set_ = g->AddLiteral(kParamEnd);
  g->newline_set_ = g->AddLiteral("\n");
  g->call_open_set_ = g->AddLiteral("<tool_call>");
  return g;
}

Result<std::shared_ptr<const ToolGrammar>> ToolGrammar::CompileJsonReply(const json& schema, const ToolGrammarOptions& options) {
  std::shared_ptr<ToolGrammar> g = Start(options);
  if (schema.is_null()) {
    g->nodes_.push_back(SchemaNode{});
    g->nodes_.back().types = kTypeObject;
    g->reply_node_ = static_cast<int32_t>(g->nodes_.size() - 1);
  } else {
    if (!schema.is_object()) return InvalidArgument("the reply's JSON schema must be an object, got " + schema.dump());
    LINEAGE_ASSIGN_OR_RETURN(g->reply_node_, g->CompileNode(schema, 0, ""));
    // A bare number has no closing byte, so it could never be followed by the
    // end: the reply is an object or an array, as OpenAI's strict schemas are.
    SchemaNode root = g->nodes_[g->reply_node_];
    root.types &= kTypeObject | kTypeArray;
    if (root.types == 0 || root.enum_set >= 0)
      return InvalidArgument("the reply's JSON schema must describe an object or an array");
    g->nodes_.push_back(std::move(root));
    g->reply_node_ = static_cast<int32_t>(g->nodes_.size() - 1);
  }
  if (options.reasoning_open) g->steps_.push_back({StepKind::kThink, -1, true});
  g->steps_.push_back({StepKind::kValue, -1, true});
  g->steps_.push_back({StepKind::kEnd, -1, false});
  return std::shared_ptr<const ToolGrammar>(std::move(g));
}

void ToolGrammar::CompileXmlKinds(int32_t node_index, const json& tools, const std::string& tool_name) {
  for (size_t i = 0; i < nodes_[node_index].properties.size(); ++i) {
    SchemaProperty& p = nodes_[node_index].properties[i];
    std::string type = ParameterSchemaType(tools, tool_name, p.name);
    if (type != "string" && !type.empty()) continue;  // the parser reads it as JSON
    p.xml_kind = XmlValueKind::kText;
    const SchemaNode& value = nodes_[p.node];
    if (value.enum_set < 0) continue;
    std::vector<std::string> items;
    for (const std::string& v : sets_[value.enum_set].items) {
      json parsed = json::parse(v);
      if (!parsed.is_string()) {
        items.clear();
        break;
      }
      items.push_back("\n" + parsed.get<std::string>() + "\n" + kParamEnd);
    }
    if (items.empty()) continue;
    p.xml_kind = XmlValueKind::kTextEnum;
    p.xml_enum_set = AddSet(items, std::vector<int32_t>(items.size(), 0));
  }
}

Result<std::shared_ptr<const ToolGrammar>> ToolGrammar::Compile(const json& tools, const std::vector<std::string>& allowed,
                                                                const ToolGrammarOptions& options) {
  if (!tools.is_array() || tools.empty()) return InvalidArgument("tool_choice requires a call, but no tools were given");
  std::shared_ptr<ToolGrammar> g = Start(options);

  for (const std::string& name : allowed) {
    bool found = false;
    for (const json& t : tools)
      if (const json* f = FunctionOf(t); f && f->at("name") == name) found = true;
    if (!found) return InvalidArgument("tool_choice names '" + name + "', which is not among the tools");
  }
  std::vector<std::string> names;
  std::vector<int32_t> ids;
  bool xml = options.format == ToolCallFormat::kXml;
  for (const json& t : tools) {
    const json* f = FunctionOf(t);
    if (!f) continue;
    std::string name = f->at("name").get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) continue;
    if (std::any_of(g->tools_.begin(), g->tools_.end(), [&](const GrammarTool& x) { return x.name == name; })) continue;
    if (name.empty() || (xml ? name.find_first_of("<>\n") != std::string::npos : json(name).dump().find("</") != std::string::npos))
      continue;  // a name the format cannot carry
    GrammarTool tool;
    tool.name = name;
    json params = f->value("parameters", json::object());
    if (!params.contains("type")) params["type"] = "object";
    Result<int32_t> compiled = g->CompileNode(params, 0, "");
    if (!compiled.ok())
      return InvalidArgument("tool '" + name + "': its parameter schema cannot constrain a call: " +
                             compiled.status().message());
    tool.params = *compiled;
    if (!(g->nodes_[tool.params].types & kTypeObject) || g->nodes_[tool.params].enum_set >= 0) {
      // Arguments are always an object; a schema saying otherwise is ignored.
      g->nodes_.push_back(SchemaNode{});
      g->nodes_.back().types = kTypeObject;
      tool.params = static_cast<int32_t>(g->nodes_.size() - 1);
    }
    if (xml) g->CompileXmlKinds(tool.params, tools, name);
    names.push_back(xml ? name + ">" : json(name).dump());
    ids.push_back(static_cast<int32_t>(g->tools_.size()));
    g->tools_.push_back(std::move(tool));
  }
  if (g->tools_.empty()) return InvalidArgument("none of the tools has a name a call can carry");
  g->name_set_ = g->AddSet(names, ids);

  auto literal = [&](std::string text, bool ws = true) {
    g->steps_.push_back({StepKind::kLiteral, g->AddLiteral(std::move(text)), ws});
  };
  if (options.reasoning_open) g->steps_.push_back({StepKind::kThink, -1, true});
  g->call_open_step_ = static_cast<int32_t>(g->steps_.size());
  g->steps_.push_back({StepKind::kLiteral, g->call_open_set_, true});
  if (xml) {
    literal("<function=");
    g->steps_.push_back({StepKind::kName, -1, false});
    g->steps_.push_back({StepKind::kArguments, -1, true});  // parameters, then </function>
  } else {
    literal("{");
    literal("\"name\"");
    literal(":");
    g->steps_.push_back({StepKind::kName, -1, true});
    literal(",");
    literal("\"arguments\"");
    literal(":");
    g->steps_.push_back({StepKind::kArguments, -1, true});
    literal("}");
  }
  literal(kCallEnd);
  g->steps_.push_back({StepKind::kCallEnd, -1, false});
  return std::shared_ptr<const ToolGrammar>(std::move(g));
}

}  // namespace lineage::server
