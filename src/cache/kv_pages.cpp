#include "cache/kv_pages.h"

#include <immintrin.h>

#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

namespace lineage::cache {
namespace {

std::atomic<PageId> g_next_page_id{1};

}  // namespace

KvPage::KvPage(const KvLayout& layout) : layout_(layout), id_(g_next_page_id.fetch_add(1)) {
  const size_t bytes = static_cast<size_t>(layout_.page_bytes());
  if (bytes > 0) {
    data_ = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (data_ == nullptr) throw std::bad_alloc();
  }
}

KvPage::~KvPage() { std::free(data_); }

std::shared_ptr<KvPage> KvPage::CopyRows(int64_t num_rows) const {
  assert(num_rows >= 0 && num_rows <= layout_.page_tokens);
  auto copy = std::make_shared<KvPage>(layout_);
  if (data_ == nullptr || num_rows == 0) return copy;
  const size_t row_bytes = static_cast<size_t>(num_rows * layout_.head_dim * layout_.element_bytes());
  for (int64_t layer = 0; layer < layout_.num_layers; ++layer) {
    for (int64_t h = 0; h < layout_.num_kv_heads; ++h) {
      std::memcpy(copy->k(layer, h), k(layer, h), row_bytes);
      std::memcpy(copy->v(layer, h), v(layer, h), row_bytes);
    }
  }
  const size_t index_bytes = static_cast<size_t>(num_rows * layout_.index_dim * layout_.element_bytes());
  for (int64_t i = 0; i < layout_.index_layers; ++i) std::memcpy(copy->index_keys(i), index_keys(i), index_bytes);
  return copy;
}

PagedKv::PagedKv(const KvLayout& layout, std::vector<PagePtr> pages, int64_t num_tokens)
    : layout_(layout), pages_(std::move(pages)), num_tokens_(num_tokens) {
  assert(static_cast<int64_t>(pages_.size()) == layout_.num_pages(num_tokens_));
  ids_.reserve(pages_.size());
  for (const PagePtr& p : pages_) ids_.push_back(p->id());
}

std::shared_ptr<const KvView> PagedKv::Prefix(int64_t n) const {
  assert(n >= 0 && n <= num_tokens_);
  std::vector<PagePtr> head(pages_.begin(), pages_.begin() + layout_.num_pages(n));
  return std::make_shared<PagedKv>(layout_, std::move(head), n);
}

PageTable::PageTable(const PagedKv& view, int64_t n) : layout_(view.layout()) {
  assert(n >= 0 && n <= view.num_tokens());
  pages_.assign(view.pages().begin(), view.pages().begin() + layout_.num_pages(n));
  num_tokens_ = n;
  reserved_tokens_ = n;
}

void PageTable::Reserve(int64_t n) {
  assert(reserved_tokens_ == num_tokens_ && "Reserve twice without Commit");
  const int64_t end = num_tokens_ + n;
  // Copy-on-write: the partial page holding the next row is shared with a
  // view (snapshot, entry, another sequence) that must never see it change.
  const int64_t used_in_last = num_tokens_ % layout_.page_tokens;
  if (n > 0 && used_in_last != 0 && pages_.back().use_count() > 1) {
    pages_.back() = pages_.back()->CopyRows(used_in_last);
    ++cow_copies_;
  }
  while (num_pages() < layout_.num_pages(end)) pages_.push_back(std::make_shared<KvPage>(layout_));
  reserved_tokens_ = end;
}

void PageTable::Truncate(int64_t n) {
  assert(n >= 0 && n <= num_tokens_ && reserved_tokens_ == num_tokens_);
  // Pages past n go; the page holding row n stays (shared or not: a later
  // Reserve copies it if a view still holds it).
  pages_.resize(static_cast<size_t>(layout_.num_pages(n)));
  num_tokens_ = reserved_tokens_ = n;
}

KvPage& PageTable::WritablePage(int64_t pos) {
  assert(pos >= num_tokens_ && pos < reserved_tokens_);
  return *pages_[pos / layout_.page_tokens];
}

void KvPage::ReadRows(int64_t layer, int64_t head, bool values, int64_t n, float* out) const {
  const void* src = values ? v(layer, head) : k(layer, head);
  const int64_t count = n * layout_.head_dim;
  if (layout_.dtype == DType::kF32) {
    std::memcpy(out, src, static_cast<size_t>(count) * 4);
    return;
  }
  const uint16_t* b = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {  // bf16 -> fp32 is a 16-bit shift
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
  }
  for (; i < count; ++i) out[i] = Bf16ToFloat(b[i]);
}

void PageTable::WriteRow(int64_t layer, int64_t head, int64_t pos, const float* k, const float* v) {
  KvPage& page = WritablePage(pos);
  const int64_t hd = layout_.head_dim, offset = (pos % layout_.page_tokens) * hd;
  if (layout_.dtype == DType::kF32) {
    std::memcpy(static_cast<float*>(page.k(layer, head)) + offset, k, static_cast<size_t>(hd) * 4);
    std::memcpy(static_cast<float*>(page.v(layer, head)) + offset, v, static_cast<size_t>(hd) * 4);
    return;
  }
  uint16_t* kd = static_cast<uint16_t*>(page.k(layer, head)) + offset;
  uint16_t* vd = static_cast<uint16_t*>(page.v(layer, head)) + offset;
  for (int64_t d = 0; d < hd; ++d) {
    kd[d] = FloatToBf16(k[d]);
    vd[d] = FloatToBf16(v[d]);
  }
}

void PageTable::WriteIndexRow(int64_t i, int64_t pos, const float* key) {
  KvPage& page = WritablePage(pos);
  const int64_t d = layout_.index_dim, offset = (pos % layout_.page_tokens) * d;
  if (layout_.dtype == DType::kF32) {
    std::memcpy(static_cast<float*>(page.index_keys(i)) + offset, key, static_cast<size_t>(d) * 4);
    return;
  }
  uint16_t* dst = static_cast<uint16_t*>(page.index_keys(i)) + offset;
  for (int64_t e = 0; e < d; ++e) dst[e] = FloatToBf16(key[e]);
}

std::shared_ptr<const PagedKv> PageTable::Share() const {
  assert(reserved_tokens_ == num_tokens_ && "Share between Reserve and Commit");
  std::vector<PagePtr> pages(pages_.begin(), pages_.begin() + layout_.num_pages(num_tokens_));
  return std::make_shared<PagedKv>(layout_, std::move(pages), num_tokens_);
}

}  // namespace lineage::cache
