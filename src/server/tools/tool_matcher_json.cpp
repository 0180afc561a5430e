#include "server/tools/tool_matcher.h"

#include <algorithm>
#include <cstring>

#include "server/tools/tool_matcher_internal.h"

namespace lineage::server {

using namespace matcher_internal;

ToolMatcher::Step ToolMatcher::FeedValue(Frame& f, uint8_t c) {
  const SchemaNode& n = g_->node(f.node);
  if (n.enum_set >= 0) {
    int32_t set = f.node;
    f = Frame{};
    --depth_;
    PushLiteral(g_->node(set).enum_set);
    return Step::kRefeed;
  }
  uint8_t t = n.types;
  bool room = depth_ < kMaxFrames;  // a container needs a frame above it
  if (c == '"' && (t & kTypeString)) {
    f.b = static_cast<int32_t>(std::min<int64_t>(g_->string_limit(f.node), INT32_MAX));
    f.kind = Kind::kString;
    f.phase = 1;
    f.a = 0;
    f.used = 0;
    f.flags = 0;
    return Step::kConsumed;
  }
  if (c == '{' && (t & kTypeObject) && room) {
    f.kind = Kind::kObject;
    f.phase = kObjFirst;
    f.used = 0;
    f.a = -1;
    return Step::kConsumed;
  }
  if (c == '[' && (t & kTypeArray) && room) {
    f.kind = Kind::kArray;
    f.phase = kArrFirst;
    f.a = 0;
    return Step::kConsumed;
  }
  if ((c == '-' || IsDigit(c)) && (t & (kTypeNumber | kTypeInteger))) {
    f.kind = Kind::kNumber;
    f.phase = 0;
    f.a = 0;
    f.flags = (t & kTypeNumber) ? 0 : 1;
    return Step::kRefeed;
  }
  int32_t set = -1;
  if ((c == 't' || c == 'f') && (t & kTypeBoolean)) set = g_->bool_set();
  if (c == 'n' && (t & kTypeNull)) set = g_->null_set();
  if (set < 0) return Step::kReject;
  --depth_;
  PushLiteral(set);
  return Step::kRefeed;
}

ToolMatcher::Step ToolMatcher::FeedObject(Frame& f, uint8_t c) {
  const SchemaNode& n = g_->node(f.node);
  bool all_required = (n.required_mask & ~f.used) == 0;
  bool more_keys = MoreKeys(n, f.used);
  if (f.phase != kObjKey && f.phase != kObjValue && IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
  switch (f.phase) {
    case kObjFirst:
    case kObjAfterComma:
      if (c == '}' && f.phase == kObjFirst && all_required) LINEAGE_POP_CONSUMED(0);
      if (c != '"' || !more_keys) return Step::kReject;
      f.phase = kObjKey;
      if (n.any_keys) {
        Frame s;
        s.kind = Kind::kString;
        s.phase = 1;
        s.b = static_cast<int32_t>(std::min<int64_t>(g_->options().max_string_bytes, INT32_MAX));
        Push(s);
        return Step::kConsumed;
      }
      PushLiteral(n.key_set, f.used);
      return Step::kRefeed;
    case kObjAfterKey:
      if (c != ':') return Step::kReject;
      f.phase = kObjAfterColon;
      f.ws = 0;
      return Step::kConsumed;
    case kObjAfterColon:
      f.phase = kObjValue;
      PushValue(f.a < 0 ? 0 : n.properties[f.a].node);
      return Step::kRefeed;
    case kObjAfterValue:
      if (c == ',' && more_keys) {
        f.phase = kObjAfterComma;
        f.ws = 0;
        return Step::kConsumed;
      }
      if (c == '}' && all_required) LINEAGE_POP_CONSUMED(0);
      return Step::kReject;
  }
  return Step::kReject;
}

ToolMatcher::Step ToolMatcher::FeedArray(Frame& f, uint8_t c) {
  const SchemaNode& n = g_->node(f.node);
  if (f.phase != kArrValue && IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
  bool may_add = n.max_items < 0 || f.a < n.max_items;
  switch (f.phase) {
    case kArrFirst:
      if (c == ']' && n.min_items == 0) LINEAGE_POP_CONSUMED(0);
      [[fallthrough]];
    case kArrAfterComma:
      if (!may_add) return Step::kReject;
      ++f.a;
      f.phase = kArrValue;
      PushValue(n.items);
      return Step::kRefeed;
    case kArrAfterValue:
      if (c == ',' && may_add) {
        f.phase = kArrAfterComma;
        f.ws = 0;
        return Step::kConsumed;
      }
      if (c == ']' && f.a >= n.min_items) LINEAGE_POP_CONSUMED(0);
      return Step::kReject;
  }
  return Step::kReject;
}

// String frame: a = body bytes so far, b = their limit, flags bit 0: the
// last byte was '<' (so '/' may not follow), bit 1: a \u escape began with
// 'd' (a surrogate is refused at its second digit), used = UTF-8 state.
ToolMatcher::Step ToolMatcher::FeedString(Frame& f, uint8_t c) {
  if (Utf8Need(f.used) > 0) return TextByte(f, c) ? Step::kConsumed : Step::kReject;
  if (f.phase == 2) {  // after a backslash
    if (c == 'u') {
      if (f.a + 5 > f.b) return Step::kReject;
      f.phase = 3;
    } else if (std::strchr("\"\\/bfnrt", c) && c != 0) {
      f.phase = 1;
    } else {
      return Step::kReject;
    }
    ++f.a;
    return Step::kConsumed;
  }
  if (f.phase >= 3) {  // \u hex digits
    if (!IsHex(c)) return Step::kReject;
    if (f.phase == 3) f.flags = (c == 'd' || c == 'D') ? 2 : 0;
    if (f.phase == 4 && (f.flags & 2) && !IsDigit(c) ) return Step::kReject;  // D800-DFFF
    if (f.phase == 4 && (f.flags & 2) && (c == '8' || c == '9')) return Step::kReject;
    f.phase = f.phase == 6 ? 1 : f.phase + 1;
    if (f.phase == 1) f.flags = 0;
    ++f.a;
    return Step::kConsumed;
  }
  if (c == '"') LINEAGE_POP_CONSUMED(0);
  bool after_lt = f.flags & 1;
  f.flags = 0;
  if (c == '\\') {
    if (f.a + 2 > f.b) return Step::kReject;
    f.phase = 2;
    ++f.a;
    return Step::kConsumed;
  }
  if (c < 0x20 || (c == '/' && after_lt)) return Step::kReject;
  if (!TextByte(f, c)) return Step::kReject;
  f.flags = c == '<' ? 1 : 0;
  return Step::kConsumed;
}

// Number frame: phase is the position in -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?,
// a = digits in the current run, flags bit 0: integers only.
ToolMatcher::Step ToolMatcher::FeedNumber(Frame& f, uint8_t c) {
  // 18 digits fit an int64; with a 2-digit exponent every number fits a double.
  constexpr int kMaxDigits = 18, kMaxExpDigits = 2;
  bool integer = f.flags & 1;
  bool digit = IsDigit(c);
  auto to = [&](uint8_t phase, int32_t count) {
    f.phase = phase;
    f.a = count;
    return Step::kConsumed;
  };
  switch (f.phase) {
    case 0:
      if (c == '-') return to(1, 0);
      [[fallthrough]];
    case 1:
      if (c == '0') return to(3, 1);
      if (digit) return to(2, 1);
      return Step::kReject;
    case 2:
      if (digit && f.a < kMaxDigits) return to(2, f.a + 1);
      [[fallthrough]];
    case 3:
      if (!integer && c == '.') return to(4, 0);
      if (!integer && (c == 'e' || c == 'E')) return to(6, 0);
      break;
    case 4:
      if (digit) return to(5, 1);
      return Step::kReject;
    case 5:
      if (digit && f.a < kMaxDigits) return to(5, f.a + 1);
      if (c == 'e' || c == 'E') return to(6, 0);
      break;
    case 6:
      if (c == '+' || c == '-') return to(7, 0);
      [[fallthrough]];
    case 7:
      if (digit) return to(8, 1);
      return Step::kReject;
    case 8:
      if (digit && f.a < kMaxExpDigits) return to(8, f.a + 1);
      break;
  }
  return Step::kPopRefeed;  // phases 2, 3, 5, 8 are complete numbers
}

}  // namespace lineage::server
