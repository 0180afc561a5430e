#include "server/tool_matcher.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace lineage::server {
namespace {

bool IsWs(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
bool IsHex(uint8_t c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// UTF-8 state packed in a frame's `used`: bytes still expected (bits 0-7)
// and the range of the next one (bits 8-15, 16-23), per RFC 3629's table.
uint64_t Utf8State(int need, uint8_t lo, uint8_t hi) { return uint64_t(need) | uint64_t(lo) << 8 | uint64_t(hi) << 16; }
int Utf8Need(uint64_t s) { return static_cast<int>(s & 0xFF); }
// Length of the sequence `lead` starts (1 for ASCII, 0 if it cannot start
// one); *state is what the next byte must be.
int Utf8Lead(uint8_t lead, uint64_t* state) {
  if (lead < 0x80) return *state = 0, 1;
  if (lead >= 0xC2 && lead <= 0xDF) return *state = Utf8State(1, 0x80, 0xBF), 2;
  if (lead == 0xE0) return *state = Utf8State(2, 0xA0, 0xBF), 3;
  if (lead == 0xED) return *state = Utf8State(2, 0x80, 0x9F), 3;
  if (lead >= 0xE1 && lead <= 0xEF) return *state = Utf8State(2, 0x80, 0xBF), 3;
  if (lead == 0xF0) return *state = Utf8State(3, 0x90, 0xBF), 4;
  if (lead >= 0xF1 && lead <= 0xF3) return *state = Utf8State(3, 0x80, 0xBF), 4;
  if (lead == 0xF4) return *state = Utf8State(3, 0x80, 0x8F), 4;
  return 0;
}
// Takes a continuation byte; false when it is not the one expected.
bool Utf8Continue(uint8_t c, uint64_t* state) {
  uint8_t lo = (*state >> 8) & 0xFF, hi = (*state >> 16) & 0xFF;
  if (c < lo || c > hi) return false;
  int need = Utf8Need(*state) - 1;
  *state = need == 0 ? 0 : Utf8State(need, 0x80, 0xBF);
  return true;
}

// Raw text words: index 0 ends the text, index 1 (if any) may not appear.
struct RawWords {
  std::string_view words[2];
  int count;
};
RawWords WordsFor(uint8_t terminator) {
  if (terminator == 0) return {{ToolGrammar::kThinkEnd, {}}, 1};
  return {{ToolGrammar::kParamEnd, ToolGrammar::kCallEnd}, 2};
}
constexpr uint8_t kThinkText = 0, kParamText = 1;

// Object phases.
enum : uint8_t { kObjFirst, kObjKey, kObjAfterKey, kObjAfterColon, kObjValue, kObjAfterValue, kObjAfterComma };
// Array phases.
enum : uint8_t { kArrFirst, kArrValue, kArrAfterValue, kArrAfterComma };
// XML parameter list phases.
enum : uint8_t { kXmlGap, kXmlNext, kXmlKey, kXmlText, kXmlJsonGap, kXmlJson, kXmlAfterJson };
// Top-level phases.
enum : uint8_t { kTopBefore, kTopChild, kTopDone = 3 };

uint64_t AllProperties(const SchemaNode& n) {
  size_t k = n.properties.size();
  return k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
}

// One byte of text in a frame that counts its bytes in `a` against the
// limit `b` and keeps its UTF-8 state in `used`. A character is taken only
// whole within the limit, so the limit never falls inside one.
bool TextByte(auto& f, uint8_t c) {
  if (Utf8Need(f.used) > 0) {
    if (!Utf8Continue(c, &f.used)) return false;
  } else {
    uint64_t state = 0;
    int n = Utf8Lead(c, &state);
    if (n == 0 || f.a + n > f.b) return false;
    f.used = state;
  }
  ++f.a;
  return true;
}

}  // namespace

ToolMatcher::ToolMatcher(const ToolGrammar* grammar) : g_(grammar) {
  depth_ = 1;
  frames_[0] = Frame{};
  EnterStep(frames_[0], 0);
}

void ToolMatcher::CopyFrom(const ToolMatcher& o) {
  g_ = o.g_;
  calls_ = o.calls_;
  depth_ = o.depth_;
  std::memcpy(frames_.data(), o.frames_.data(), sizeof(Frame) * depth_);
}

bool ToolMatcher::Push(const Frame& f) {
  if (depth_ >= kMaxFrames) return false;
  frames_[depth_++] = f;
  return true;
}

void ToolMatcher::PushLiteral(int32_t set, uint64_t excluded) {
  Frame f;
  f.kind = Kind::kLiteral;
  f.node = set;
  f.a = 0;
  f.b = static_cast<int32_t>(g_->literal_set(set).items.size()) << 16;  // lo = 0 (low half), hi (high half)
  f.used = excluded;
  bool ok = Push(f);
  assert(ok);
  (void)ok;
}

void ToolMatcher::PushValue(int32_t node) {
  Frame f;
  f.kind = Kind::kValue;
  f.node = node;
  bool ok = Push(f);
  assert(ok);
  (void)ok;
}

void ToolMatcher::PushRawText(uint8_t terminator, int64_t max_bytes) {
  Frame f;
  f.kind = Kind::kRawText;
  f.node = terminator;
  f.b = static_cast<int32_t>(std::min<int64_t>(max_bytes, INT32_MAX));
  bool ok = Push(f);
  assert(ok);
  (void)ok;
}

void ToolMatcher::EnterStep(Frame& top, int32_t step) {
  top.ws = 0;
  top.phase = kTopBefore;
  top.node = step;
  if (g_->steps()[step].kind != ToolGrammar::StepKind::kCallEnd) return;
  ++calls_;
  if (calls_ < g_->options().max_calls) top.node = g_->call_open_step();
  else top.phase = kTopDone;
}

bool ToolMatcher::Accepting() const {
  if (depth_ != 1) return false;
  const Frame& top = frames_[0];
  return top.phase == kTopDone || (top.phase == kTopBefore && top.node == g_->call_open_step() && calls_ > 0);
}

bool ToolMatcher::Finished() const { return depth_ == 1 && frames_[0].phase == kTopDone; }

TextState ToolMatcher::text_state() const {
  const Frame& f = frames_[depth_ - 1];
  TextState t;
  if (f.kind == Kind::kString && f.phase == 1 && Utf8Need(f.used) == 0) {
    t.kind = TextState::Kind::kJsonString;
    t.room_bytes = int64_t{f.b} - f.a;
    if (f.flags & 1) t.first_bytes[t.num_first_bytes++] = '/';
  } else if (f.kind == Kind::kRawText && Utf8Need(f.used) == 0 && f.a < f.b) {
    t.kind = TextState::Kind::kRawText;
    t.room_bytes = int64_t{f.b} - f.a;
    RawWords w = WordsFor(static_cast<uint8_t>(f.node));
    for (int i = 0; f.phase > 0 && i < w.count; ++i) {
      if (!((f.flags >> i) & 1) || f.phase >= w.words[i].size()) continue;
      uint8_t next = static_cast<uint8_t>(w.words[i][f.phase]);
      if (t.num_first_bytes == 0 || t.first_bytes[0] != next) t.first_bytes[t.num_first_bytes++] = next;
    }
  }
  return t;
}

bool ToolMatcher::Whitespace(Frame& f, uint8_t c) {
  (void)c;
  return ++f.ws <= g_->options().max_whitespace;
}

bool ToolMatcher::Advance(std::string_view bytes) {
  for (char c : bytes)
    if (!Advance(static_cast<uint8_t>(c))) return false;
  return true;
}

bool ToolMatcher::Advance(uint8_t c) {
  // Each pass either consumes, rejects, pushes (bounded by kMaxFrames) or pops.
  for (int pass = 0; pass < 3 * kMaxFrames; ++pass) {
    Frame& f = frames_[depth_ - 1];
    Step s = Feed(f, c);
    if (s == Step::kConsumed) return true;
    if (s == Step::kReject) return false;
    if (s == Step::kPopRefeed) {
      int32_t result = f.b;
      --depth_;
      Return(result);
    }
  }
  return false;
}

ToolMatcher::Step ToolMatcher::Feed(Frame& f, uint8_t c) {
  switch (f.kind) {
    case Kind::kTop: return FeedTop(f, c);
    case Kind::kValue: return FeedValue(f, c);
    case Kind::kObject: return FeedObject(f, c);
    case Kind::kArray: return FeedArray(f, c);
    case Kind::kString: return FeedString(f, c);
    case Kind::kNumber: return FeedNumber(f, c);
    case Kind::kLiteral: return FeedLiteral(f, c);
    case Kind::kRawText: return FeedRawText(f, c);
    case Kind::kXmlParams: return FeedXmlParams(f, c);
  }
  return Step::kReject;
}

// A child that finished without consuming the byte pops with kPopRefeed; one
// that finished on it pops here and reports kConsumed.
#define LINEAGE_POP_CONSUMED(result) \
  do {                               \
    int32_t r_ = (result);           \
    --depth_;                        \
    Return(r_);                      \
    return Step::kConsumed;          \
  } while (0)

void ToolMatcher::Return(int32_t result) {
  Frame& f = frames_[depth_ - 1];
  f.ws = 0;
  switch (f.kind) {
    case Kind::kTop:
      if (g_->steps()[f.node].kind == ToolGrammar::StepKind::kName) f.a = result;
      EnterStep(f, f.node + 1);
      return;
    case Kind::kObject:
      if (f.phase == kObjKey) {
        const SchemaNode& n = g_->node(f.node);
        f.a = n.any_keys ? -1 : result;
        if (!n.any_keys) f.used |= uint64_t{1} << result;
        f.phase = kObjAfterKey;
      } else {
        f.phase = kObjAfterValue;
      }
      return;
    case Kind::kArray:
      f.phase = kArrAfterValue;
      return;
    case Kind::kXmlParams: {
      const SchemaNode& n = g_->node(f.node);
      if (f.phase == kXmlNext) {
        if (result == 1) {  // </function>: the parameter list is complete
          --depth_;
          Return(0);
          return;
        }
        f.phase = kXmlKey;
        PushLiteral(n.xml_key_set, f.used);
      } else if (f.phase == kXmlKey) {
        f.a = result;
        f.used |= uint64_t{1} << result;
        const SchemaProperty& p = n.properties[result];
        if (p.xml_kind == XmlValueKind::kJson) {
          f.phase = kXmlJsonGap;
        } else if (p.xml_kind == XmlValueKind::kTextEnum) {
          f.phase = kXmlText;
          PushLiteral(p.xml_enum_set);
        } else {
          f.phase = kXmlText;
          PushRawText(kParamText, g_->string_limit(p.node));
          PushLiteral(g_->newline_set());  // the template's "\n" after the tag
        }
      } else if (f.phase == kXmlJson) {
        f.phase = kXmlAfterJson;
      } else {
        f.phase = kXmlGap;
      }
      return;
    }
    default:  // raw text under its leading newline: nothing to do
      return;
  }
}

ToolMatcher::Step ToolMatcher::FeedTop(Frame& f, uint8_t c) {
  if (f.phase != kTopBefore) return Step::kReject;
  const ToolGrammar::Step& step = g_->steps()[f.node];
  if (step.ws_before && IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
  f.phase = kTopChild;
  switch (step.kind) {
    case ToolGrammar::StepKind::kThink:
      PushRawText(kThinkText, g_->options().think_max_bytes);
      break;
    case ToolGrammar::StepKind::kLiteral:
      PushLiteral(step.literal_set);
      break;
    case ToolGrammar::StepKind::kName:
      PushLiteral(g_->name_set());
      break;
    case ToolGrammar::StepKind::kArguments: {
      int32_t params = g_->tool(f.a).params;
      if (g_->options().format == ToolCallFormat::kJson) {
        PushValue(params);
      } else {
        Frame x;
        x.kind = Kind::kXmlParams;
        x.node = params;
        x.phase = kXmlGap;
        Push(x);
      }
      break;
    }
    case ToolGrammar::StepKind::kCallEnd:
      return Step::kReject;
  }
  return Step::kRefeed;
}

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
  bool more_keys = n.any_keys || (AllProperties(n) & ~f.used) != 0;
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

// Literal frame: a = bytes matched, b = candidate range [lo, hi) as
// lo | hi << 16 over the sorted items (on pop: the matched id), used =
// excluded ids (below 64).
ToolMatcher::Step ToolMatcher::FeedLiteral(Frame& f, uint8_t c) {
  const LiteralSet& s = g_->literal_set(f.node);
  auto excluded = [&](int i) { return s.ids[i] < 64 && s.ids[i] >= 0 && ((f.used >> s.ids[i]) & 1); };
  int lo = f.b & 0xFFFF, hi = (f.b >> 16) & 0xFFFF;
  size_t pos = static_cast<size_t>(f.a);
  int first = -1, last = -1, complete = -1;
  for (int i = lo; i < hi; ++i) {
    if (excluded(i)) continue;
    const std::string& item = s.items[i];
    if (item.size() == pos) complete = i;
    else if (static_cast<uint8_t>(item[pos]) == c) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) {
    if (complete < 0) return Step::kReject;
    f.b = s.ids[complete];
    return Step::kPopRefeed;
  }
  ++pos;
  bool longer = false;
  int done = -1;
  for (int i = first; i <= last; ++i) {
    if (excluded(i)) continue;
    if (s.items[i].size() > pos) longer = true;
    else if (s.items[i].size() == pos) done = i;
  }
  if (!longer && done >= 0) LINEAGE_POP_CONSUMED(s.ids[done]);
  f.a = static_cast<int32_t>(pos);
  f.b = first | (last + 1) << 16;
  return Step::kConsumed;
}

// Raw text frame: node = which words, a = bytes so far, b = limit, phase =
// bytes of a word matched, flags = words still matching (bit i), used =
// UTF-8 state. From the limit on, only the terminator may follow: the one
// under way, or (when none is) one begun afresh at '<'.
ToolMatcher::Step ToolMatcher::FeedRawText(Frame& f, uint8_t c) {
  if (Utf8Need(f.used) > 0) return TextByte(f, c) ? Step::kConsumed : Step::kReject;
  RawWords w = WordsFor(static_cast<uint8_t>(f.node));
  bool closing = f.a >= f.b;
  if (f.phase > 0) {
    uint8_t alive = 0;
    for (int i = 0; i < w.count; ++i)
      if (((f.flags >> i) & 1) && f.phase < w.words[i].size() && static_cast<uint8_t>(w.words[i][f.phase]) == c)
        alive |= 1 << i;
    if (closing) alive &= 1;
    if (alive) {
      ++f.phase;
      ++f.a;
      f.flags = alive;
      if ((alive & 1) && f.phase == w.words[0].size()) LINEAGE_POP_CONSUMED(0);
      if ((alive & 2) && f.phase == w.words[1].size()) return Step::kReject;
      return Step::kConsumed;
    }
    // Past the limit, a terminator under way must be finished: restarting it
    // at every '<' would let the text grow without end.
    if (closing && (f.flags & 1)) return Step::kReject;
    f.phase = 0;  // the partial word was text after all
  }
  if (c == '<') {
    f.phase = 1;
    f.flags = closing ? 1 : (1 << w.count) - 1;
    ++f.a;
    return Step::kConsumed;
  }
  if (closing) return Step::kReject;
  return TextByte(f, c) ? Step::kConsumed : Step::kReject;
}

ToolMatcher::Step ToolMatcher::FeedXmlParams(Frame& f, uint8_t c) {
  const SchemaNode& n = g_->node(f.node);
  switch (f.phase) {
    case kXmlGap: {
      if (IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
      uint64_t excluded = 0;
      if (n.any_keys || (AllProperties(n) & ~f.used) == 0) excluded |= 1;  // no parameter left
      if ((n.required_mask & ~f.used) != 0) excluded |= 2;                 // a required one is missing
      f.phase = kXmlNext;
      PushLiteral(g_->xml_next_set(), excluded);
      return Step::kRefeed;
    }
    case kXmlJsonGap:
      if (IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
      f.phase = kXmlJson;
      PushValue(n.properties[f.a].node);
      return Step::kRefeed;
    case kXmlAfterJson:
      if (IsWs(c)) return Whitespace(f, c) ? Step::kConsumed : Step::kReject;
      f.phase = kXmlText;
      PushLiteral(g_->param_end_set());
      return Step::kRefeed;
  }
  return Step::kReject;
}

#undef LINEAGE_POP_CONSUMED

}  // namespace lineage::server
