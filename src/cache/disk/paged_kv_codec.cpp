#include "cache/disk/paged_kv_codec.h"

#include <cstring>
#include <string>

namespace lineage::cache::disk {

int64_t PagedKvPayloadBytes(const KvLayout& layout, int64_t num_rows) {
  return layout.num_layers * 2 * layout.num_kv_heads * num_rows * layout.head_dim * 4;
}

Status EncodePagedKvPage(const KvLayout& layout, const KvView& kv, int64_t page_index, int64_t num_rows,
                         std::vector<uint8_t>* out) {
  const auto* paged = dynamic_cast<const PagedKv*>(&kv);
  if (paged == nullptr) return InvalidArgument("disk codec: KV is not a PagedKv");
  const KvLayout& l = paged->layout();
  if (l.num_layers != layout.num_layers || l.num_kv_heads != layout.num_kv_heads || l.head_dim != layout.head_dim ||
      l.page_tokens != layout.page_tokens) {
    return InvalidArgument("disk codec: KV layout differs from the codec's");
  }
  if (page_index < 0 || page_index >= static_cast<int64_t>(paged->pages().size()) || num_rows < 1 ||
      num_rows > layout.page_tokens) {
    return InvalidArgument("disk codec: page " + std::to_string(page_index) + " rows " + std::to_string(num_rows) +
                           " outside the KV");
  }
  const KvPage& page = *paged->pages()[static_cast<size_t>(page_index)];
  const size_t block = static_cast<size_t>(num_rows * layout.head_dim) * 4;
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
  return Status::Ok();
}

Result<KvPtr> DecodePagedKv(const KvLayout& layout, std::span<const PagePayload> pages, int64_t num_tokens) {
  if (num_tokens < 0 || static_cast<int64_t>(pages.size()) != layout.num_pages(num_tokens)) {
    return Corrupt("disk codec: " + std::to_string(pages.size()) + " pages for " + std::to_string(num_tokens) +
                   " tokens");
  }
  std::vector<PagePtr> out;
  out.reserve(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    const PagePayload& pp = pages[i];
    const int64_t needed = std::min(layout.page_tokens, num_tokens - static_cast<int64_t>(i) * layout.page_tokens);
    if (pp.num_rows < needed || pp.num_rows > layout.page_tokens ||
        static_cast<int64_t>(pp.bytes.size()) != PagedKvPayloadBytes(layout, pp.num_rows)) {
      return Corrupt("disk codec: page " + std::to_string(i) + " holds " + std::to_string(pp.num_rows) +
                     " rows in " + std::to_string(pp.bytes.size()) + " bytes, " + std::to_string(needed) +
                     " rows needed");
    }
    auto page = std::make_shared<KvPage>(layout);
    const size_t block = static_cast<size_t>(pp.num_rows * layout.head_dim) * 4;
    const size_t keep = static_cast<size_t>(needed * layout.head_dim) * 4;
    const uint8_t* p = pp.bytes.data();
    for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
      for (int kv_half = 0; kv_half < 2; ++kv_half) {
        for (int64_t h = 0; h < layout.num_kv_heads; ++h) {
          std::memcpy(kv_half == 0 ? page->k(layer, h) : page->v(layer, h), p, keep);
          p += block;
        }
      }
    }
    out.push_back(std::move(page));
  }
  return KvPtr(std::make_shared<PagedKv>(layout, std::move(out), num_tokens));
}

}  // namespace lineage::cache::disk
