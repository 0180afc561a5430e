#include "server/replies/output_parser.h"

#include <algorithm>

namespace lineage::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolOpen = "<tool_call>";
constexpr std::string_view kToolClose = "</tool_call>";

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Length of the longest suffix of `s` that is a proper prefix of `tag`.
size_t PartialTagSuffix(std::string_view s, std::string_view tag) {
  size_t max_len = std::min(s.size(), tag.size() - 1);
  for (size_t len = max_len; len > 0; --len)
    if (s.substr(s.size() - len) == tag.substr(0, len)) return len;
  return 0;
}

size_t TrailingSpace(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsSpace(s[s.size() - 1 - n])) ++n;
  return n;
}

}  // namespace

OutputParser::OutputParser(Options options)
    : options_(std::move(options)), state_(options_.reasoning_open ? State::kReasoning : State::kContent) {}

void OutputParser::EnterState(State s) {
  state_ = s;
  block_start_ = true;
}

void OutputParser::EmitText(std::string_view text, std::vector<OutputEvent>* out) {
  if (block_start_) {
    while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
    if (text.empty()) return;
    block_start_ = false;
  }
  if (text.empty()) return;
  OutputEvent::Kind kind = state_ == State::kReasoning ? OutputEvent::Kind::kReasoning : OutputEvent::Kind::kContent;
  if (kind == OutputEvent::Kind::kContent) seen_content_ = true;
  if (!out->empty() && out->back().kind == kind) {
    out->back().text.append(text);
  } else {
    OutputEvent e;
    e.kind = kind;
    e.text = std::string(text);
    out->push_back(std::move(e));
  }
}

void OutputParser::Step(std::vector<OutputEvent>* out, bool at_end) {
  for (;;) {
    if (state_ == State::kToolCall) {
      size_t close = buffer_.find(kToolClose);
      if (close == std::string::npos && !at_end) return;
      std::string body = buffer_.substr(0, close);
      buffer_.erase(0, close == std::string::npos ? buffer_.size() : close + kToolClose.size());
      auto call = ParseToolCallBody(body, options_.tools);
      EnterState(State::kContent);
      if (call.ok()) {
        OutputEvent e;
        e.kind = OutputEvent::Kind::kToolCall;
        e.call = std::move(call).value();
        out->push_back(std::move(e));
        seen_content_ = true;
      } else {
        std::string raw = std::string(kToolOpen) + body + (close == std::string::npos ? "" : std::string(kToolClose));
        block_start_ = false;
        EmitText(raw, out);
      }
      if (at_end && buffer_.empty()) return;
      continue;
    }
    // Content or reasoning: find the earliest tag that ends this block.
    std::vector<std::string_view> tags;
    if (state_ == State::kReasoning) {
      tags.push_back(kThinkClose);
    } else {
      // <think> opens reasoning only as the first thing in the output.
      size_t first_text = buffer_.find_first_not_of(" \t\r\n");
      bool think_possible = !seen_content_ && block_start_ &&
                            (first_text == std::string::npos ||
                             std::string_view(buffer_).substr(first_text, kThinkOpen.size()) ==
                                 kThinkOpen.substr(0, std::min(kThinkOpen.size(), buffer_.size() - first_text)));
      if (think_possible) tags.push_back(kThinkOpen);
      if (options_.parse_tool_calls) tags.push_back(kToolOpen);
    }
    size_t best = std::string::npos;
    std::string_view best_tag;
    for (std::string_view tag : tags) {
      size_t p = buffer_.find(tag);
      if (p < best) best = p, best_tag = tag;
    }
    if (best != std::string::npos) {
      // A <think> after visible text is plain text; only leading whitespace may precede it.
      std::string_view before(buffer_.data(), best);
      std::string_view trimmed = before.substr(0, before.size() - TrailingSpace(before));
      EmitText(trimmed, out);
      buffer_.erase(0, best + best_tag.size());
      if (best_tag == kThinkOpen) EnterState(State::kReasoning);
      else if (best_tag == kThinkClose) EnterState(State::kContent);
      else EnterState(State::kToolCall);
      continue;
    }
    // No complete tag: emit all but a possible tag start and trailing whitespace.
    size_t hold = TrailingSpace(buffer_);
    if (!at_end) {
      for (std::string_view tag : tags) hold = std::max(hold, PartialTagSuffix(buffer_, tag));
      // A tag prefix may itself follow whitespace that must stay held.
      size_t before_tag = buffer_.size() - hold;
      hold += TrailingSpace(std::string_view(buffer_.data(), before_tag));
    }
    EmitText(std::string_view(buffer_.data(), buffer_.size() - hold), out);
    buffer_.erase(0, buffer_.size() - hold);
    if (at_end) buffer_.clear();  // trailing whitespace of the last block
    return;
  }
}

std::vector<OutputEvent> OutputParser::Feed(std::string_view text) {
  buffer_.append(text);
  std::vector<OutputEvent> out;
  Step(&out, false);
  return out;
}

std::vector<OutputEvent> OutputParser::Finish() {
  std::vector<OutputEvent> out;
  Step(&out, true);
  return out;
}

}  // namespace lineage::server
