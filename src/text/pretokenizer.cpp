#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pretokenizer.h"

#include <pcre2.h>

namespace lineage::text {

struct Pretokenizer::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

// Per-thread match state. A JIT stack larger than the default keeps long
// runs of whitespace (the `\s+(?!\S)` branch backtracks) from failing.
struct ThreadMatchState {
  pcre2_match_data* data = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  pcre2_match_context* context = nullptr;
  ThreadMatchState() {
    data = pcre2_match_data_create(16, nullptr);
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~ThreadMatchState() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
  }
};

ThreadMatchState& MatchState() {
  thread_local ThreadMatchState state;
  return state;
}

// Byte length of the character at text[pos] (1 for invalid bytes).
size_t CharLen(std::string_view text, size_t pos) {
  unsigned char b = static_cast<unsigned char>(text[pos]);
  size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
  return std::min(n, text.size() - pos);
}

}  // namespace

Result<Pretokenizer> Pretokenizer::Create(const std::vector<std::string>& patterns) {
  Pretokenizer p;
  p.patterns_ = patterns;
  for (const std::string& pattern : patterns) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_offset,
                                     nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      return InvalidArgument("pre-tokenizer regex at offset " + std::to_string(err_offset) + ": " +
                             reinterpret_cast<const char*>(msg) + " in /" + pattern + "/");
    }
    auto c = std::make_shared<Compiled>();
    c->code = code;
    c->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    p.compiled_.push_back(std::move(c));
  }
  return p;
}

namespace {

// Splits text[piece] with one pattern, appending the pieces to `out`.
void SplitOne(const pcre2_code* code, bool jit, std::string_view text, Span piece, std::vector<Span>* out) {
  ThreadMatchState& st = MatchState();
  // The subject is the piece alone, so look-arounds stop at its edges.
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + piece.begin);
  size_t len = piece.end - piece.begin;
  std::string_view sv = text.substr(piece.begin, len);
  size_t pos = 0;     // end of what has been emitted
  size_t search = 0;  // where the next match attempt starts
  while (search < len) {
    int rc = jit ? pcre2_jit_match(code, subject, len, search, 0, st.data, st.context)
                 : pcre2_match(code, subject, len, search, 0, st.data, st.context);
    if (rc < 0) break;  // no match (or a resource limit): the rest is one piece
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    size_t s = ov[0], e = ov[1];
    if (e == s) {  // empty match: nothing to isolate; move past one character
      search = s + CharLen(sv, s);
      continue;
    }
    if (s > pos) out->push_back({piece.begin + uint32_t(pos), piece.begin + uint32_t(s)});
    out->push_back({piece.begin + uint32_t(s), piece.begin + uint32_t(e)});
    pos = search = e;
  }
  if (pos < len) out->push_back({piece.begin + uint32_t(pos), piece.end});
}

}  // namespace

void Pretokenizer::Split(std::string_view text, Span range, std::vector<Span>* pieces) const {
  if (range.begin == range.end) return;
  if (compiled_.empty()) {
    pieces->push_back(range);
    return;
  }
  if (compiled_.size() == 1) {
    SplitOne(compiled_[0]->code, compiled_[0]->jit, text, range, pieces);
    return;
  }
  std::vector<Span> cur{range}, next;
  for (const auto& c : compiled_) {
    next.clear();
    for (Span piece : cur) SplitOne(c->code, c->jit, text, piece, &next);
    cur.swap(next);
  }
  pieces->insert(pieces->end(), cur.begin(), cur.end());
}

}  // namespace lineage::text
