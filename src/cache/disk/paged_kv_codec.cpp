#include "cache/disk/paged_kv_codec.h"

#include <cstring>
#include <string>

namespace lineage::cache::disk {

int64_t PagedKvPayloadBytes(const KvLayout& layout, int64_t num_rows) {
  return (layout.num_layers * 2 * layout.num_kv_heads * layout.head_dim + layout.index_layers * layout.index_dim) *
         num_rows * layout.element_bytes();
}

Status EncodePagedKvPage(const KvLayout& layout, const KvView& kv, int64_t page_index, int64_t num_rows,
                         std::vector<uint8_t>* out) {
  const auto* paged = dynamic_cast<const PagedKv*>(&kv);
  if (paged == nullptr) return InvalidArgument("disk codec: KV is not a PagedKv");
  const KvLayout& l = paged->layout();
  if (l != layout) return InvalidArgument("disk codec: KV layout differs from the codec's");
  if (page_index < 0 || page_index >= static_cast<int64_t>(paged->pages().size()) || num_rows < 1 ||
      num_rows > layout.page_tokens) {
    return InvalidArgument("disk codec: page " + std::to_string(page_index) + " rows " + std::to_string(num_rows) +
                           " outside the KV");
  }
  const KvPage& page = *paged->pages()[static_cast<size_t>(page_index)];
  const size_t block = static_cast<size_t>(num_rows * layout.head_dim * layout.element_bytes());
  const size_t start = out->size();
  out->resize(start + static_cast<size_t>(PagedKvPayloadBytes(layout, num_rows)));
  uint8_t* p = out->data() + start;
  for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
    for (int kv_half = 0; kv_half < 2; ++kv_half) {
      for (int64_t h = 0; h < layout.num_kv_heads; ++h) {
        std::memcpy(p, kv_half == 0 ? page.k(layer, h) : page.v(layer, h), block);
        p += block;
      }
    }
  }
  const size_t index_block = static_cast<size_t>(num_rows * layout.index_dim * layout.element_bytes());
  for (int64_t i = 0; i < layout.index_layers; ++i) {
    std::memcpy(p, page.index_keys(i), index_block);
    p += index_block;
  }
  return Status::Ok();
}

namespace {

class PagedKvBuilder final : public KvBuilder {
 public:
  PagedKvBuilder(const KvLayout& layout, int64_t num_tokens) : layout_(layout), num_tokens_(num_tokens) {
    pages_.reserve(static_cast<size_t>(layout_.num_pages(num_tokens_)));
  }

  Status AddPage(const PagePayload& pp) override {
    const auto i = static_cast<int64_t>(pages_.size());
    if (i >= layout_.num_pages(num_tokens_)) return Corrupt("disk codec: more pages than the length needs");
    const int64_t needed = std::min(layout_.page_tokens, num_tokens_ - i * layout_.page_tokens);
    if (pp.num_rows < needed || pp.num_rows > layout_.page_tokens ||
        static_cast<int64_t>(pp.bytes.size()) != PagedKvPayloadBytes(layout_, pp.num_rows)) {
      return Corrupt("disk codec: page " + std::to_string(i) + " holds " + std::to_string(pp.num_rows) + " rows in " +
                     std::to_string(pp.bytes.size()) + " bytes, " + std::to_string(needed) + " rows needed");
    }
    auto page = std::make_shared<KvPage>(layout_);
    const size_t block = static_cast<size_t>(pp.num_rows * layout_.head_dim * layout_.element_bytes());
    const size_t keep = static_cast<size_t>(needed * layout_.head_dim * layout_.element_bytes());
    const uint8_t* p = pp.bytes.data();
    for (int64_t layer = 0; layer < layout_.num_layers; ++layer) {
      for (int kv_half = 0; kv_half < 2; ++kv_half) {
        for (int64_t h = 0; h < layout_.num_kv_heads; ++h) {
          std::memcpy(kv_half == 0 ? page->k(layer, h) : page->v(layer, h), p, keep);
          p += block;
        }
      }
    }
    const size_t index_block = static_cast<size_t>(pp.num_rows * layout_.index_dim * layout_.element_bytes());
    const size_t index_keep = static_cast<size_t>(needed * layout_.index_dim * layout_.element_bytes());
    for (int64_t k = 0; k < layout_.index_layers; ++k) {
      std::memcpy(page->index_keys(k), p, index_keep);
      p += index_block;
    }
    pages_.push_back(std::move(page));
    return Status::Ok();
  }

  Result<KvPtr> Finish() override {
    if (static_cast<int64_t>(pages_.size()) != layout_.num_pages(num_tokens_)) {
      return Corrupt("disk codec: " + std::to_string(pages_.size()) + " pages for " + std::to_string(num_tokens_) +
                     " tokens");
    }
    return KvPtr(std::make_shared<PagedKv>(layout_, std::move(pages_), num_tokens_));
  }

 private:
  KvLayout layout_;
  int64_t num_tokens_;
  std::vector<PagePtr> pages_;
};

}  // namespace

std::unique_ptr<KvBuilder> NewPagedKvBuilder(const KvLayout& layout, int64_t num_tokens) {
  return std::make_unique<PagedKvBuilder>(layout, num_tokens);
}

Result<KvPtr> DecodePagedKv(const KvLayout& layout, std::span<const PagePayload> pages, int64_t num_tokens) {
  if (num_tokens < 0) return Corrupt("disk codec: negative length");
  std::unique_ptr<KvBuilder> b = NewPagedKvBuilder(layout, num_tokens);
  for (const PagePayload& pp : pages) {
    if (Status st = b->AddPage(pp); !st.ok()) return st;
  }
  return b->Finish();
}

}  // namespace lineage::cache::disk
