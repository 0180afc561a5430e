#include "text/tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "text/added_tokens.h"
#include "text/byte_level.h"
#include "text/normalizer.h"
#include "text/pretokenizer.h"
#include "text/spm.h"
#include "text/word_cache.h"

namespace lineage::text {

struct Tokenizer::Impl {
  std::vector<std::string> tokens;
  std::vector<model::TokenType> types;
  std::vector<std::string> bytes;  // decoded bytes of each token
  std::vector<bool> control;       // control or unknown: rendered only when asked
  std::unordered_map<std::string_view, TokenId> text_to_id;  // keys point into `tokens`
  TokenizerKind kind = TokenizerKind::kBpe;
  BpeModel bpe;
  SpmModel spm;
  Pretokenizer pretokenizer;
  AddedTokenMatcher added;
  std::unordered_set<TokenId> end_of_generation;
  bool nfc = false;
  bool ignore_merges = false;
  bool add_prefix_space = false;
  bool add_bos = false;
  TokenId bos = kNoToken, eos = kNoToken, eot = kNoToken, pad = kNoToken;
  std::string chat_template;
  uint32_t cache_owner = WordCache::NewOwner();

  TokenId Lookup(std::string_view text) const {
    auto it = text_to_id.find(text);
    return it == text_to_id.end() ? kNoToken : it->second;
  }
  // `after_special`: the text starts the input or follows an added token.
  void EncodeRaw(std::string_view text, bool after_special, size_t max_tokens, std::vector<TokenId>* out) const;
  void EncodeWord(std::string_view word, std::vector<TokenId>* out) const;
};

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581

// Bytes of an SPM token: "<0xXX>" byte tokens are that byte; other pieces
// have their U+2581 turned back into spaces.
std::string SpmPieceBytes(const std::string& text, model::TokenType type) {
  if (type == model::TokenType::kByte && text.size() == 6 && text.compare(0, 3, "<0x") == 0) {
    return std::string(1, static_cast<char>(std::strtol(text.substr(3, 2).c_str(), nullptr, 16)));
  }
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
      out += ' ';
      i += kSpmSpace.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Token texts that end a turn in the common chat formats.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
    "<EOT>",      "<|end_of_text|>", "<|return|>", "<|call|>"};

}  // namespace

Result<Tokenizer> Tokenizer::Build(TokenizerSpec spec) {
  auto impl = std::make_shared<Impl>();
  const size_t n = spec.tokens.size();
  if (n == 0) return InvalidArgument("tokenizer has no tokens");
  if (n > static_cast<size_t>(INT32_MAX)) return InvalidArgument("tokenizer has too many tokens");
  if (spec.types.empty()) spec.types.assign(n, model::TokenType::kNormal);
  if (spec.types.size() != n) {
    return InvalidArgument("token_type has " + std::to_string(spec.types.size()) + " entries for " +
                           std::to_string(n) + " tokens");
  }
  impl->tokens = std::move(spec.tokens);
  impl->types = std::move(spec.types);
  impl->text_to_id.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    if (!impl->tokens[i].empty()) impl->text_to_id.emplace(impl->tokens[i], static_cast<TokenId>(i));
  }

  std::vector<bool> is_added(n, false);
  std::vector<AddedTokenMatcher::Entry> entries;
  for (const AddedTokenSpec& a : spec.added) {
    if (a.id < 0 || static_cast<size_t>(a.id) >= n) {
      return InvalidArgument("added token id " + std::to_string(a.id) + " outside the vocabulary");
    }
    is_added[a.id] = true;
    entries.push_back({impl->tokens[a.id], a.id, a.special, a.lstrip, a.rstrip});
  }
  impl->added = AddedTokenMatcher(std::move(entries));

  impl->bytes.resize(n);
  impl->control.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    model::TokenType t = impl->types[i];
    const std::string& text = impl->tokens[i];
    if (is_added[i] || t == model::TokenType::kControl || t == model::TokenType::kUserDefined ||
        t == model::TokenType::kUnknown) {
      impl->bytes[i] = text;
      impl->control[i] = t == model::TokenType::kControl || t == model::TokenType::kUnknown;
    } else if (t == model::TokenType::kUnused) {
      continue;
    } else if (spec.kind == TokenizerKind::kSpm) {
      impl->bytes[i] = SpmPieceBytes(text, t);
    } else {
      ByteLevelDecode(text, &impl->bytes[i]);
    }
  }

  impl->kind = spec.kind;
  std::array<TokenId, 256> byte_ids;
  for (int b = 0; b < 256; ++b) {
    if (spec.kind == TokenizerKind::kSpm) {
      // "<0xXX>" byte tokens, else the byte as a one-character token.
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      byte_ids[b] = impl->Lookup(hex);
      if (byte_ids[b] == kNoToken) byte_ids[b] = impl->Lookup(std::string(1, static_cast<char>(b)));
    } else {
      byte_ids[b] = impl->Lookup(ByteToken(static_cast<uint8_t>(b)));
    }
  }
  if (spec.kind == TokenizerKind::kSpm) impl->spm = SpmModel(&impl->text_to_id, std::move(spec.scores), byte_ids);
  std::vector<BpeModel::Merge> merges;
  merges.reserve(spec.merges.size());
  std::string joined;
  for (const auto& [a, b] : spec.merges) {
    joined.assign(a).append(b);
    BpeModel::Merge m{impl->Lookup(a), impl->Lookup(b), impl->Lookup(joined)};
    // A merge whose parts or result are not tokens can never fire usefully.
    if (m.left != kNoToken && m.right != kNoToken && m.merged != kNoToken) merges.push_back(m);
  }
  impl->bpe = BpeModel::Build(byte_ids, merges);

  LINEAGE_ASSIGN_OR_RETURN(impl->pretokenizer, Pretokenizer::Create(spec.pre_patterns));
  impl->nfc = spec.nfc;
  impl->ignore_merges = spec.ignore_merges;
  impl->add_prefix_space = spec.add_prefix_space;
  auto valid_id = [n](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n ? id : kNoToken; };
  impl->bos = valid_id(spec.bos_id);
  impl->eos = valid_id(spec.eos_id);
  impl->eot = valid_id(spec.eot_id);
  impl->pad = valid_id(spec.pad_id);
  impl->add_bos = spec.add_bos && impl->bos != kNoToken;
  impl->chat_template = std::move(spec.chat_template);
  for (std::string_view t : kEndOfTurnTexts) {
    TokenId id = impl->Lookup(t);
    if (id == kNoToken) continue;
    impl->end_of_generation.insert(id);
    if (impl->eot == kNoToken) impl->eot = id;
  }
  if (impl->eos != kNoToken) impl->end_of_generation.insert(impl->eos);
  if (impl->eot != kNoToken) impl->end_of_generation.insert(impl->eot);

  Tokenizer t;
  t.impl_ = std::move(impl);
  return t;
}

Result<Tokenizer> Tokenizer::FromVocabData(const model::VocabData& vocab) {
  if (vocab.model != "gpt2") return Unsupported("tokenizer model '" + vocab.model + "' (only byte-level BPE, gpt2)");
  return Build(SpecFromVocabData(vocab));
}

void Tokenizer::Impl::EncodeWord(std::string_view word, std::vector<TokenId>* out) const {
  if (ignore_merges) {
    TokenId whole = Lookup(ByteLevelEncode(word));
    if (whole != kNoToken) {
      out->push_back(whole);
      return;
    }
  }
  if (WordCache::Lookup(cache_owner, word, out)) return;
  size_t start = out->size();
  if (kind == TokenizerKind::kSpm) spm.Encode(word, out);
  else bpe.EncodeWord(word, out);
  WordCache::Insert(cache_owner, word, out->data() + start, out->size() - start);
}

void Tokenizer::Impl::EncodeRaw(std::string_view text, bool after_special, size_t max_tokens,
                                std::vector<TokenId>* out) const {
  if (text.empty()) return;
  WordCache::Scope cache_scope;
  if (kind == TokenizerKind::kSpm) {
    std::string escaped;
    escaped.reserve(text.size() * 2 + 3);
    if (add_prefix_space && after_special) escaped += kSpmSpace;
    for (char c : text) {
      if (c == ' ') escaped += kSpmSpace;
      else escaped += c;
    }
    if (spm.word_separable()) {
      ForEachSpmWord(escaped, [&](std::string_view word) {
        if (out->size() <= max_tokens) EncodeWord(word, out);
      });
    } else {
      spm.Encode(escaped, out);
    }
    return;
  }
  std::string owned;
  if (nfc && !IsTriviallyNfc(text)) {
    owned = ToNfc(text);
    text = owned;
  }
  if (add_prefix_space && text[0] != ' ') {
    owned = " " + std::string(text);
    text = owned;
  }
  thread_local std::vector<Span> pieces;
  pieces.clear();
  pretokenizer.Split(text, Span{0, static_cast<uint32_t>(text.size())}, &pieces);
  for (Span p : pieces) {
    if (out->size() > max_tokens) return;
    EncodeWord(text.substr(p.begin, p.end - p.begin), out);
  }
}

std::vector<TokenId> Tokenizer::Encode(std::string_view text, EncodeOptions options) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 4);
  EncodeAppend(text, options, &ids);
  return ids;
}

void Tokenizer::EncodeAppend(std::string_view text, EncodeOptions options, std::vector<TokenId>* out) const {
  const Impl& im = *impl_;
  if (options.add_special && im.add_bos) out->push_back(im.bos);
  size_t pos = 0;
  bool after_special = true;
  while (pos < text.size() && out->size() <= options.max_tokens) {
    AddedTokenMatcher::Match m;
    bool found = im.added.FindNext(text, pos, options.parse_special, &m);
    size_t end = found ? m.begin : text.size();
    if (found && m.entry->lstrip) {
      while (end > pos && IsAsciiSpace(text[end - 1])) --end;
    }
    // Pieces between added tokens are encoded separately: the added token's
    // boundary is also a pre-tokenizer boundary.
    if (end > pos) {
      im.EncodeRaw(text.substr(pos, end - pos), after_special, options.max_tokens, out);
      after_special = false;
    }
    if (!found) break;
    out->push_back(m.entry->id);
    after_special = true;
    pos = m.end;
    if (m.entry->rstrip) {
      while (pos < text.size() && IsAsciiSpace(text[pos])) ++pos;
    }
  }
}

std::string Tokenizer::Decode(std::span<const TokenId> ids, DecodeOptions options) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    if (id < 0 || static_cast<size_t>(id) >= impl_->bytes.size()) continue;
    if (!options.render_special && impl_->control[id]) continue;
    std::string_view piece = impl_->bytes[id];
    // SPM put a space before the text; as llama.cpp, the first token loses it.
    if (i == 0 && impl_->kind == TokenizerKind::kSpm && impl_->add_prefix_space && !piece.empty() && piece[0] == ' ') {
      piece.remove_prefix(1);
    }
    out += piece;
  }
  return out;
}

std::string_view Tokenizer::TokenBytes(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->bytes.size()) return {};
  return impl_->bytes[id];
}

std::string_view Tokenizer::TokenText(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->tokens.size()) return {};
  return impl_->tokens[id];
}

TokenId Tokenizer::TextToId(std::string_view token_text) const { return impl_->Lookup(token_text); }
int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->tokens.size()); }
model::TokenType Tokenizer::token_type(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->types.size()) return model::TokenType::kUnused;
  return impl_->types[id];
}
bool Tokenizer::IsControl(TokenId id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->control.size() && impl_->control[id];
}
bool Tokenizer::IsEndOfGeneration(TokenId id) const { return impl_->end_of_generation.count(id) > 0; }
TokenId Tokenizer::bos_id() const { return impl_->bos; }
TokenId Tokenizer::eos_id() const { return impl_->eos; }
TokenId Tokenizer::eot_id() const { return impl_->eot; }
TokenId Tokenizer::pad_id() const { return impl_->pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }
size_t Tokenizer::num_merges() const { return impl_->bpe.num_merges(); }

}  // namespace lineage::text
