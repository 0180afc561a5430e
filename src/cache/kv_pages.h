// KV page store: the key/value rows of every attention layer, held in
// fixed-size pages that sequences and cache entries share (DESIGN.md §3.6).
//
// A page holds `page_tokens` consecutive token positions of EVERY attention
// layer, K (after q/k-norm and RoPE) and V, as fp32 or bf16 (KvLayout::dtype;
// docs/engine.md weighs the two). Inside a page the layout is
// [layer][K|V][kv_head][token][head_dim], so one head's keys of a page are
// page_tokens contiguous rows — the order attention reads them in. Sparse
// latent models add one indexer key per token and indexer layer after them:
// [index_layer][token][index_dim].
//
// Ownership and invariants:
//   - Pages are reference counted (shared_ptr). A page that any holder other
//     than the writing PageTable references is never written again: a
//     PageTable that must append into a shared, partly filled page copies it
//     first (copy-on-write). A full page is never written at all.
//   - Every page has a PageId unique for the life of the process; a copy gets
//     a new id. Equal ids mean the same bytes.
//   - Readers never look at rows at or past the length they were given.
//   - Attention-free models have a layout with zero layers: pages then hold
//     no bytes, but ids and lengths still work.
//
// Thread-safety: a PageTable is used by one thread at a time. PagedKv views
// are immutable and may be read and copied from any thread; page refcounts
// and the id counter are atomic.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/payload.h"
#include "core/dtype.h"

namespace lineage::cache {

struct KvLayout {
  int64_t num_layers = 0;    // attention layers only
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t page_tokens = 64;
  DType dtype = DType::kF32;  // kF32 or kBF16
  int64_t index_layers = 0;  // layers that cache a lightning-indexer key (0: none)
  int64_t index_dim = 0;     // elements of one indexer key

  bool operator==(const KvLayout&) const = default;
  int64_t element_bytes() const { return dtype == DType::kBF16 ? 2 : 4; }
  // Elements of one head's K (or V) rows in one page.
  int64_t head_block_elements() const { return page_tokens * head_dim; }
  int64_t layer_elements() const { return 2 * num_kv_heads * head_block_elements(); }
  int64_t index_block_elements() const { return page_tokens * index_dim; }
  int64_t page_elements() const { return num_layers * layer_elements() + index_layers * index_block_elements(); }
  int64_t page_bytes() const { return page_elements() * element_bytes(); }
  int64_t num_pages(int64_t num_tokens) const { return (num_tokens + page_tokens - 1) / page_tokens; }
};

class KvPage {
 public:
  explicit KvPage(const KvLayout& layout);
  ~KvPage();
  KvPage(const KvPage&) = delete;
  KvPage& operator=(const KvPage&) = delete;

  // A fresh page (new id) holding a copy of this page's first `num_rows` rows.
  std::shared_ptr<KvPage> CopyRows(int64_t num_rows) const;

  PageId id() const { return id_; }
  // The whole page, layout.page_bytes() bytes in the order above: what a disk
  // tier writes and reads back into a fresh page (before sharing it).
  const void* data() const { return data_; }
  void* mutable_data() { return data_; }
  // K rows of (layer, kv_head): [page_tokens, head_dim] of layout.dtype.
  // V likewise.
  void* k(int64_t layer, int64_t head) { return data_ + Offset(layer, 0, head); }
  void* v(int64_t layer, int64_t head) { return data_ + Offset(layer, 1, head); }
  const void* k(int64_t layer, int64_t head) const { return data_ + Offset(layer, 0, head); }
  const void* v(int64_t layer, int64_t head) const { return data_ + Offset(layer, 1, head); }
  // Rows [0, n) of K (values = false) or V of (layer, head) as fp32 into
  // out[n, head_dim].
  void ReadRows(int64_t layer, int64_t head, bool values, int64_t n, float* out) const;
  // The indexer keys of index layer i: [page_tokens, index_dim] of layout.dtype.
  const void* index_keys(int64_t i) const { return data_ + IndexOffset(i); }
  void* index_keys(int64_t i) { return data_ + IndexOffset(i); }

 private:
  int64_t IndexOffset(int64_t i) const {
    return (layout_.num_layers * layout_.layer_elements() + i * layout_.index_block_elements()) *
           layout_.element_bytes();
  }
  int64_t Offset(int64_t layer, int64_t kv, int64_t head) const {
    return (layer * layout_.layer_elements() + (kv * layout_.num_kv_heads + head) * layout_.head_block_elements()) *
           layout_.element_bytes();
  }
  KvLayout layout_;
  PageId id_;
  uint8_t* data_ = nullptr;  // page_bytes(), 64-byte aligned; null for a zero-layer layout
};

using PagePtr = std::shared_ptr<KvPage>;

// An immutable view of rows [0, num_tokens) over shared pages: what a
// snapshot, an entry or a checkpoint holds. Implements the cache's KvView.
class PagedKv final : public KvView {
 public:
  PagedKv(const KvLayout& layout, std::vector<PagePtr> pages, int64_t num_tokens);

  int64_t num_tokens() const override { return num_tokens_; }
  int64_t page_tokens() const override { return layout_.page_tokens; }
  int64_t page_bytes() const override { return layout_.page_bytes(); }
  std::span<const PageId> page_ids() const override { return ids_; }
  std::shared_ptr<const KvView> Prefix(int64_t n) const override;

  const KvLayout& layout() const { return layout_; }
  const std::vector<PagePtr>& pages() const { return pages_; }

 private:
  KvLayout layout_;
  std::vector<PagePtr> pages_;
  std::vector<PageId> ids_;
  int64_t num_tokens_;
};

// The page table of one running sequence: rows [0, num_tokens()) readable,
// rows appended after Reserve().
class PageTable {
 public:
  explicit PageTable(const KvLayout& layout) : layout_(layout) {}
  // Starts from the first `n` rows of `view` (n <= view.num_tokens()),
  // sharing its pages; nothing is copied until the first write.
  PageTable(const PagedKv& view, int64_t n);

  const KvLayout& layout() const { return layout_; }
  int64_t num_tokens() const { return num_tokens_; }
  int64_t num_pages() const { return static_cast<int64_t>(pages_.size()); }
  const KvPage& page(int64_t i) const { return *pages_[i]; }

  // Makes rows [num_tokens(), num_tokens() + n) writable: copies a shared
  // partial last page (copy-on-write) and allocates new pages. The rows are
  // not yet readable; Commit() publishes them. REQUIRES: every earlier
  // Reserve was committed.
  void Reserve(int64_t n);
  // Stores K and V row `pos` of (layer, head), converting fp32 to the page
  // type; pos must be reserved.
  void WriteRow(int64_t layer, int64_t head, int64_t pos, const float* k, const float* v);
  // Stores the indexer key of index layer i at `pos` (reserved), converted.
  void WriteIndexRow(int64_t i, int64_t pos, const float* key);
  // Rows [num_tokens(), num_tokens() + n) now hold data.
  void Commit(int64_t n) {
    num_tokens_ += n;
    reserved_tokens_ = num_tokens_;
  }

  // Forgets rows [n, num_tokens()) (rejected drafts): later appends write
  // over them. REQUIRES: n <= num_tokens(), no Reserve pending.
  void Truncate(int64_t n);

  // A view sharing every page; the partial last page becomes shared, so the
  // next append into it copies it.
  std::shared_ptr<const PagedKv> Share() const;

  // Number of page copies made by Reserve (copy-on-write) since construction.
  int64_t cow_copies() const { return cow_copies_; }

 private:
  KvPage& WritablePage(int64_t pos);

  KvLayout layout_;
  std::vector<PagePtr> pages_;
  int64_t num_tokens_ = 0;
  int64_t reserved_tokens_ = 0;
  int64_t cow_copies_ = 0;
};

}  // namespace lineage::cache
