#include "cache/counted_payload.h"

#include <xxhash.h>

#include <string>

namespace lineage::cache {

uint64_t TokenHash(TokenSpan tokens) { return XXH3_64bits(tokens.data(), tokens.size_bytes()); }

CountedKv::CountedKv(std::shared_ptr<const Tokens> tokens, int64_t num_tokens, std::vector<PageId> pages,
                     int64_t page_tokens, int64_t page_bytes)
    : tokens_(std::move(tokens)),
      num_tokens_(num_tokens),
      pages_(std::move(pages)),
      page_tokens_(page_tokens),
      page_bytes_(page_bytes) {}

std::shared_ptr<const KvView> CountedKv::Prefix(int64_t n) const {
  const int64_t num_pages = (n + page_tokens_ - 1) / page_tokens_;
  std::vector<PageId> pages(pages_.begin(), pages_.begin() + num_pages);
  return std::make_shared<CountedKv>(tokens_, n, std::move(pages), page_tokens_, page_bytes_);
}

std::shared_ptr<const CountedKv> CountedKv::WithPages(std::vector<PageId> pages) const {
  return std::make_shared<CountedKv>(tokens_, num_tokens_, std::move(pages), page_tokens_, page_bytes_);
}

void CountedSequence::Admit(TokenSpan prompt, const RestorePoint& from) {
  const int64_t r = from.length;
  tokens_.assign(prompt.begin(), prompt.begin() + r);
  pages_.clear();
  if (r == 0) return;
  const auto src = from.kv->page_ids();
  const int64_t full_pages = r / shape_.page_tokens;
  pages_.assign(src.begin(), src.begin() + full_pages);
  if (r % shape_.page_tokens != 0) {
    // The page holding r is written past r by this sequence: it gets a copy.
    pages_.push_back(alloc_->New());
    ++pages_copied_;
  }
}

void CountedSequence::Append(TokenSpan tokens) {
  for (TokenId t : tokens) {
    if (length() % shape_.page_tokens == 0) pages_.push_back(alloc_->New());
    tokens_.push_back(t);
  }
}

std::vector<CapturedState> CountedSequence::Prefill(TokenSpan prompt, const std::vector<PlannedCapture>& plan) {
  std::vector<CapturedState> captured;
  for (const PlannedCapture& c : plan) {
    if (c.n <= length()) continue;
    Append(prompt.subspan(tokens_.size(), static_cast<size_t>(c.n - length())));
    captured.push_back({c.n, c.kind, State()});
  }
  Append(prompt.subspan(tokens_.size()));
  return captured;
}

KvPtr CountedSequence::Kv() const {
  return std::make_shared<CountedKv>(std::make_shared<const Tokens>(tokens_), length(), pages_, shape_.page_tokens,
                                     shape_.page_bytes);
}

RecurrentPtr CountedSequence::State() const {
  if (!shape_.recurrent()) return nullptr;
  return std::make_shared<CountedBlob>(shape_.blob_bytes, length(), TokenHash(tokens_));
}

RecurrentPtr CountedSequence::StateAt(int64_t n) const {
  if (!shape_.recurrent()) return nullptr;
  return std::make_shared<CountedBlob>(shape_.blob_bytes, n, TokenHash(TokenSpan(tokens_).first(static_cast<size_t>(n))));
}

Status VerifyRestore(TokenSpan prompt, const RestorePoint& rp, bool recurrent) {
  const int64_t r = rp.length;
  const auto m = static_cast<int64_t>(prompt.size());
  if (r == 0) return rp.entry == kNoEntry ? Status::Ok() : Internal("restore of length 0 names an entry");
  if (r >= m) return Internal("restore point " + std::to_string(r) + " is not shorter than the prompt");
  const auto* kv = dynamic_cast<const CountedKv*>(rp.kv.get());
  if (!kv) return Internal("restore has no counted KV");
  if (kv->num_tokens() != r) return Internal("restored KV holds " + std::to_string(kv->num_tokens()) + " rows, not r");
  if (static_cast<int64_t>(kv->page_ids().size()) != (r + kv->page_tokens() - 1) / kv->page_tokens()) {
    return Internal("restored KV has the wrong page count");
  }
  const uint64_t want = TokenHash(prompt.first(static_cast<size_t>(r)));
  if (TokenHash(kv->tokens()) != want) return Internal("restored KV stands for other tokens");
  if (!recurrent) return rp.state ? Internal("attention-only restore carries a state") : Status::Ok();
  const auto* blob = dynamic_cast<const CountedBlob*>(rp.state.get());
  if (!blob) return Internal("restore has no counted recurrent state");
  if (blob->num_tokens() != r || blob->token_hash() != want) {
    return Internal("restored state stands for other tokens (length " + std::to_string(blob->num_tokens()) + ")");
  }
  return Status::Ok();
}

}  // namespace lineage::cache
