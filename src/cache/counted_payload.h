// Counted payloads: byte-count stand-ins for real model state, used by the
// cache tests and by the trace simulator (DESIGN.md §3.8). They model page
// sharing the way the engine does it, and carry the tokens they stand for so
// that every restore can be checked against the prompt:
//  - a CountedKv lists page ids and holds (shared) the token sequence whose
//    rows it stands for; Prefix(n) shares its pages and tokens;
//  - a CountedBlob stands for a recurrent state after n tokens and carries
//    the hash of those tokens;
//  - a CountedSequence is one running sequence of a fake engine: admission at
//    a restore point r shares the source's pages below r and copies the page
//    holding r when r falls inside it; new tokens fill new pages.
// VerifyRestore is the safety check of issue 4: the restored KV and state
// stand for exactly prompt[0, r).
//
// Thread-safety: CountedKv and CountedBlob are immutable. PageAllocator is
// thread-safe. A CountedSequence belongs to one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cache/lineage_cache.h"

namespace lineage::cache {

uint64_t TokenHash(TokenSpan tokens);

struct PayloadShape {
  int64_t page_tokens = 64;
  int64_t page_bytes = 64 * 1024;  // one page of every attention layer
  int64_t blob_bytes = 16 * 1024;  // one recurrent state; 0 = attention-only
  bool recurrent() const { return blob_bytes > 0; }
};

class PageAllocator {
 public:
  PageId New() { return next_.fetch_add(1, std::memory_order_relaxed); }
  int64_t allocated() const { return static_cast<int64_t>(next_.load(std::memory_order_relaxed) - 1); }

 private:
  std::atomic<PageId> next_{1};
};

class CountedKv final : public KvView {
 public:
  CountedKv(std::shared_ptr<const Tokens> tokens, int64_t num_tokens, std::vector<PageId> pages,
            int64_t page_tokens, int64_t page_bytes);
  int64_t num_tokens() const override { return num_tokens_; }
  int64_t page_tokens() const override { return page_tokens_; }
  int64_t page_bytes() const override { return page_bytes_; }
  std::span<const PageId> page_ids() const override { return pages_; }
  std::shared_ptr<const KvView> Prefix(int64_t n) const override;
  // The same rows in other pages (a copy read back from disk).
  std::shared_ptr<const CountedKv> WithPages(std::vector<PageId> pages) const;
  TokenSpan tokens() const { return TokenSpan(*tokens_).first(static_cast<size_t>(num_tokens_)); }

 private:
  std::shared_ptr<const Tokens> tokens_;  // at least num_tokens_ long
  int64_t num_tokens_;
  std::vector<PageId> pages_;
  int64_t page_tokens_;
  int64_t page_bytes_;
};

class CountedBlob final : public RecurrentBlob {
 public:
  CountedBlob(int64_t bytes, int64_t num_tokens, uint64_t token_hash)
      : bytes_(bytes), num_tokens_(num_tokens), token_hash_(token_hash) {}
  int64_t bytes() const override { return bytes_; }
  int64_t num_tokens() const { return num_tokens_; }
  uint64_t token_hash() const { return token_hash_; }

 private:
  int64_t bytes_;
  int64_t num_tokens_;
  uint64_t token_hash_;
};

class CountedSequence {
 public:
  CountedSequence(PageAllocator* pages, PayloadShape shape) : alloc_(pages), shape_(shape) {}

  // Starts from a restore point (r == 0: cold). REQUIRES: VerifyRestore passed.
  void Admit(TokenSpan prompt, const RestorePoint& from);
  // Prefills prompt[length(), m), stopping at each planned capture to copy the
  // state out; returns the captured states for Commit.
  std::vector<CapturedState> Prefill(TokenSpan prompt, const std::vector<PlannedCapture>& plan);
  void Append(TokenSpan tokens);

  int64_t length() const { return static_cast<int64_t>(tokens_.size()); }
  const Tokens& tokens() const { return tokens_; }
  KvPtr Kv() const;
  RecurrentPtr State() const;  // null for attention-only shapes
  // The state after its first n tokens (n <= length()): a capture taken
  // after the fact, as the simulator prefills a prompt at once and decides
  // later, in modelled time, what another request waits for.
  RecurrentPtr StateAt(int64_t n) const;
  int64_t pages_copied() const { return pages_copied_; }

 private:
  PageAllocator* alloc_;
  PayloadShape shape_;
  Tokens tokens_;
  std::vector<PageId> pages_;
  int64_t pages_copied_ = 0;
};

// OK iff `rp` restores exactly prompt[0, rp.length): KV rows, page count and
// (for recurrent shapes) the state's length and token hash.
Status VerifyRestore(TokenSpan prompt, const RestorePoint& rp, bool recurrent);

}  // namespace lineage::cache
