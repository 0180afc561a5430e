// ToolMatcher: where a reply stands in a ToolGrammar, advanced one byte at a
// time — a pushdown automaton whose stack holds small fixed-size frames
// (the top-level sequence, objects, arrays, strings, numbers, literal sets,
// raw text).
//
// Invariants: frames_[0] is the top-level sequence; the stack never exceeds
// kMaxFrames (deeper JSON is refused at '{' / '[' while a scalar still fits,
// so no state is a dead end). A frame that ends on a byte it cannot take
// (a number, an open literal) pops and hands the byte to its parent.
//
// The type is a plain value: copying it (CopyFrom copies only the live
// frames) is how the vocabulary walk branches. It borrows the grammar, which
// must outlive it. Not thread-safe; one per request.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "server/tools/tool_grammar.h"

namespace lineage::server {

// What the top frame is while it is plain text, for the vocabulary walk's
// fast path: a token made only of "plain" bytes that fits is accepted there,
// unless its first byte is one of `first_bytes`, which may continue a word
// under way (after '<': the '/' of "</", or the next letter of a terminator);
// those tokens must be walked.
struct TextState {
  enum class Kind : uint8_t { kNone, kJsonString, kRawText };
  Kind kind = Kind::kNone;
  int64_t room_bytes = 0;  // plain bytes that still fit
  int num_first_bytes = 0;
  uint8_t first_bytes[2] = {0, 0};
};

class ToolMatcher {
 public:
  static constexpr int kMaxFrames = 32;

  explicit ToolMatcher(const ToolGrammar* grammar);
  ToolMatcher(const ToolMatcher& other) { CopyFrom(other); }
  ToolMatcher& operator=(const ToolMatcher& other) {
    CopyFrom(other);
    return *this;
  }
  void CopyFrom(const ToolMatcher& other);

  // Consumes one byte; false when the grammar does not allow it (the state
  // is then unspecified: callers advance a copy).
  bool Advance(uint8_t byte);
  bool Advance(std::string_view bytes);
  // The reply may end here: every call is closed.
  bool Accepting() const;
  // No byte can follow (only the end remains).
  bool Finished() const;
  TextState text_state() const;
  int num_calls() const { return calls_; }

 private:
  enum class Kind : uint8_t { kTop, kValue, kObject, kArray, kString, kNumber, kLiteral, kRawText, kXmlParams };
  struct Frame {
    Kind kind = Kind::kTop;
    uint8_t phase = 0;
    uint8_t ws = 0;      // whitespace bytes in the current gap
    uint8_t flags = 0;   // kind-specific
    int32_t node = 0;    // schema node, literal set, or step
    int32_t a = 0;       // kind-specific counters
    int32_t b = 0;
    uint64_t used = 0;   // properties used (objects), candidates excluded (literals)
  };
  static_assert(sizeof(Frame) == 24);

  // kRefeed: a child was pushed and takes the byte; kPopRefeed: this frame
  // ended before the byte, which goes to the parent.
  enum class Step : uint8_t { kConsumed, kReject, kRefeed, kPopRefeed };
  Step Feed(Frame& f, uint8_t c);
  Step FeedTop(Frame& f, uint8_t c);
  Step FeedValue(Frame& f, uint8_t c);
  Step FeedObject(Frame& f, uint8_t c);
  Step FeedArray(Frame& f, uint8_t c);
  Step FeedString(Frame& f, uint8_t c);
  Step FeedNumber(Frame& f, uint8_t c);
  Step FeedLiteral(Frame& f, uint8_t c);
  Step FeedRawText(Frame& f, uint8_t c);
  Step FeedXmlParams(Frame& f, uint8_t c);
  // Called on the parent when its child popped; `result` is a literal's id.
  void Return(int32_t result);
  // The top-level sequence enters step `step`.
  void EnterStep(Frame& top, int32_t step);
  bool Whitespace(Frame& f, uint8_t c);

  bool Push(const Frame& f);
  void PushLiteral(int32_t set, uint64_t excluded = 0);
  void PushValue(int32_t node);
  void PushRawText(uint8_t terminator, int64_t max_bytes);

  const ToolGrammar* g_;
  int calls_ = 0;
  int depth_ = 0;
  std::array<Frame, kMaxFrames> frames_;
};

}  // namespace lineage::server
