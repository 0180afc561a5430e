// Value: a Python object as a Jinja template sees it.
//
// Chat templates are written against Python semantics, so values model them:
// None, bool, int, float, str (optionally a markupsafe.Markup), list and
// tuple, dict (insertion ordered, string keys), Jinja's namespace, callables
// (macros, builtins, bound methods) and Jinja's default Undefined.
//
// Invariants: lists, dicts and namespaces are reference types (shared_ptr),
// as in Python; strings are UTF-8 bytes and every length, index and slice on
// them counts code points. A Value is not thread-safe; each render owns its
// values (the parsed Template is shared read-only).
//
// Memory: a Value made or copied during a render charges sizeof(Value) plus
// its string's bytes to that render's budget and releases them when
// destroyed (see render_memory.h); a Dict charges its keys. Destroying a
// deeply nested list or dict does not recurse without bound: below a fixed
// depth, containers whose last reference goes are destroyed iteratively.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace lineage::jinja {

class Value;
using List = std::vector<Value>;

// A dict with string keys, kept in insertion order like a Python dict.
class Dict {
 public:
  Dict() = default;
  Dict(const Dict& other);
  Dict& operator=(const Dict&) = delete;
  ~Dict();
  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);
  void Set(std::string key, Value value);
  size_t size() const { return items_.size(); }
  std::vector<std::pair<std::string, Value>>& items() { return items_; }
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, Value>> items_;
  size_t charged_key_bytes_ = 0;  // keys charged to the render budget by Set and the copy
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

class Interpreter;
// A callable's body. Errors are reported by throwing RenderError (see error.h).
using NativeFn = std::function<Value(Interpreter&, CallArgs&)>;

struct Callable {
  std::string name;  // for error messages ("macro 'foo'")
  NativeFn fn;
};

enum class Kind : uint8_t {
  kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kCallable,
};

class Value {
 public:
  Value();  // Undefined
  Value(const Value& other);
  Value(Value&& other) noexcept;
  Value& operator=(const Value& other);
  Value& operator=(Value&& other) noexcept;
  ~Value();

  static Value Undefined(std::string hint = {}) { Value v; v.SetString(std::move(hint)); return v; }
  static Value None() { Value v; v.kind_ = Kind::kNone; return v; }
  static Value Bool(bool b) { Value v; v.kind_ = Kind::kBool; v.i_ = b; return v; }
  static Value Int(int64_t i) { Value v; v.kind_ = Kind::kInt; v.i_ = i; return v; }
  static Value Float(double f) { Value v; v.kind_ = Kind::kFloat; v.f_ = f; return v; }
  static Value String(std::string s, bool markup = false) {
    Value v; v.kind_ = Kind::kString; v.SetString(std::move(s)); v.flag_ = markup; return v;
  }
  static Value MakeList(List items = {}, bool tuple = false);
  static Value MakeDict(std::shared_ptr<Dict> d = nullptr);
  static Value MakeNamespace(std::shared_ptr<Dict> d = nullptr);
  static Value MakeCallable(std::string name, NativeFn fn);
  // Throws a kLimit RenderError for input nested deeper than 512 levels.
  static Value FromJson(const nlohmann::ordered_json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_number() const { return kind_ == Kind::kBool || kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_markup() const { return kind_ == Kind::kString && flag_; }
  bool is_tuple() const { return kind_ == Kind::kList && flag_; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }  // Bool and Int
  double as_double() const { return kind_ == Kind::kFloat ? f_ : static_cast<double>(i_); }
  const std::string& str() const { return s_; }  // String; Undefined: the hint
  List& list() const { return *list_; }
  Dict& dict() const { return *dict_; }   // Dict and Namespace
  const Callable& callable() const { return *fn_; }
  const void* identity() const;  // for `is sameas` on reference types

  bool Truthy() const;
  // Python str(): what `{{ value }}` prints (Undefined prints nothing).
  std::string ToStr() const;
  void AppendStr(std::string& out) const;
  // Python repr(), used for items inside str(list) and str(dict).
  void AppendRepr(std::string& out) const;
  std::string TypeName() const;  // Python type name for error messages

 private:
  static Value FromJson(const nlohmann::ordered_json& j, int depth);
  void AppendRepr(std::string& out, int depth) const;
  // Stores s as the string and charges its bytes (s_ is only set here).
  void SetString(std::string s);
  // Drops list_ and dict_, deferring the destruction of a last reference
  // when destructions already nest deep on this thread.
  void DropContainers();
  void Swap(Value& other) noexcept;

  Kind kind_ = Kind::kUndefined;
  bool flag_ = false;  // String: is Markup; List: is tuple
  uint32_t charged_bytes_ = 0;  // charged to the render budget of this thread; fits in the padding
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Callable> fn_;
};

// Python float repr: shortest round-trip digits, "1.0", "1e+16", "inf", "nan".
void AppendPythonFloat(double f, std::string& out);
// Python repr() of a str (quotes chosen the way Python chooses them).
void AppendPythonStrRepr(std::string_view s, std::string& out);

}  // namespace lineage::jinja
