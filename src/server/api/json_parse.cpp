#include "server/api/json_parse.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// A SAX consumer building the DOM bottom-up: an object's members wait in a
// vector of movable pairs until the object closes (see the header for why).
class BoundedDomBuilder {
 public:
  explicit BoundedDomBuilder(int max_depth) : max_depth_(max_depth) {}

  bool null() { return Add(json(nullptr)); }
  bool boolean(bool v) { return Add(json(v)); }
  bool number_integer(json::number_integer_t v) { return Add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Add(json(v)); }
  bool string(json::string_t& v) { return Add(json(std::move(v))); }
  bool binary(json::binary_t& v) { return Add(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return Open(true); }
  bool key(json::string_t& k) {
    stack_.back().key = std::move(k);
    return true;
  }
  bool end_object() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    return Add(BuildObject(std::move(f.members)));
  }
  bool start_array(std::size_t) { return Open(false); }
  bool end_array() {
    json arr = json::array();
    arr.get_ref<json::array_t&>() = std::move(stack_.back().items);
    stack_.pop_back();
    return Add(std::move(arr));
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_position_ = position;
    return false;
  }

  bool depth_exceeded() const { return depth_exceeded_; }
  size_t error_position() const { return error_position_; }
  json& root() { return root_; }

 private:
  struct Frame {
    bool object = false;
    std::string key;
    std::vector<std::pair<std::string, json>> members;
    std::vector<json> items;
  };

  bool Open(bool object) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      depth_exceeded_ = true;
      return false;
    }
    stack_.emplace_back();
    stack_.back().object = object;
    return true;
  }

  bool Add(json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
    } else if (stack_.back().object) {
      stack_.back().members.emplace_back(std::move(stack_.back().key), std::move(v));
    } else {
      stack_.back().items.push_back(std::move(v));
    }
    return true;
  }

  static json BuildObject(std::vector<std::pair<std::string, json>> members) {
    // A repeated key keeps its first position and takes the last value.
    std::vector<bool> dropped(members.size(), false);
    size_t kept = members.size();
    if (members.size() > 1) {
      std::unordered_map<std::string_view, size_t> first;
      first.reserve(members.size());
      for (size_t i = 0; i < members.size(); ++i) {
        auto [it, inserted] = first.emplace(members[i].first, i);
        if (inserted) continue;
        members[it->second].second = std::move(members[i].second);
        dropped[i] = true;
        --kept;
      }
    }
    json obj = json::object();
    auto& map = obj.get_ref<json::object_t&>();
    map.reserve(kept);  // no reallocation below: nothing is copied
    for (size_t i = 0; i < members.size(); ++i)
      if (!dropped[i]) map.emplace_back(std::move(members[i].first), std::move(members[i].second));
    return obj;
  }

  int max_depth_;
  std::vector<Frame> stack_;
  json root_;
  bool depth_exceeded_ = false;
  size_t error_position_ = 0;
};

}  // namespace

Result<json> ParseJsonBounded(std::string_view text, std::string_view what, int max_depth) {
  BoundedDomBuilder builder(max_depth);
  bool ok = json::sax_parse(text.begin(), text.end(), &builder, nlohmann::detail::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (builder.depth_exceeded())
    return InvalidArgument(std::string(what) + " nests JSON deeper than " + std::to_string(max_depth) + " levels");
  if (!ok)
    return InvalidArgument(std::string(what) + " is not valid JSON (at byte " +
                           std::to_string(builder.error_position()) + ")");
  return std::move(builder.root());
}

}  // namespace lineage::server
