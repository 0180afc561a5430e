#include "server/tools/tool_matcher.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "server/tools/tool_matcher_internal.h"

namespace lineage::server {

using namespace matcher_internal;

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
  if (g_->steps()[step].kind == ToolGrammar::StepKind::kEnd) {
    top.phase = kTopDone;
    return;
  }
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
        if (!n.any_keys) f.used |= PropertyBit(result);
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
        f.used |= PropertyBit(result);
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
    case ToolGrammar::StepKind::kValue:
      PushValue(g_->reply_node());
      break;
    case ToolGrammar::StepKind::kCallEnd:
    case ToolGrammar::StepKind::kEnd:
      return Step::kReject;
  }
  return Step::kRefeed;
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
      if (n.any_keys || !MoreKeys(n, f.used)) excluded |= 1;  // no parameter left
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

}  // namespace lineage::server
