// KV page store: sharing, reference counts, copy-on-write of a partial page,
// Prefix(n), unique ids.
#include "cache/kv_pages.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace lineage::cache {
namespace {

KvLayout SmallLayout() {
  KvLayout l;
  l.num_layers = 2;
  l.num_kv_heads = 2;
  l.head_dim = 4;
  l.page_tokens = 4;
  return l;
}

float Value(int64_t layer, int64_t head, int64_t pos, int64_t d, bool is_v, float salt = 0) {
  return salt + layer * 1000 + head * 100 + pos + d * 0.01f + (is_v ? 0.5f : 0.0f);
}

void Append(PageTable& t, int64_t n, float salt = 0) {
  t.Reserve(n);
  const KvLayout& l = t.layout();
  for (int64_t pos = t.num_tokens(); pos < t.num_tokens() + n; ++pos) {
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      for (int64_t h = 0; h < l.num_kv_heads; ++h) {
        std::vector<float> k(l.head_dim), v(l.head_dim);
        for (int64_t d = 0; d < l.head_dim; ++d) {
          k[d] = Value(layer, h, pos, d, false, salt);
          v[d] = Value(layer, h, pos, d, true, salt);
        }
        t.WriteRow(layer, h, pos, k.data(), v.data());
      }
    }
  }
  t.Commit(n);
}

// What a page of layout `l` gives back for a written value.
float Stored(const KvLayout& l, float x) { return l.dtype == DType::kBF16 ? Bf16ToFloat(FloatToBf16(x)) : x; }

// Checks rows [begin, end) of `pages` hold Value(..., salt).
void ExpectRows(const std::vector<PagePtr>& pages, const KvLayout& l, int64_t begin, int64_t end, float salt = 0) {
  std::vector<float> k(l.page_tokens * l.head_dim), v(k.size());
  for (int64_t pos = begin; pos < end; ++pos) {
    const KvPage& p = *pages[pos / l.page_tokens];
    const int64_t off = (pos % l.page_tokens) * l.head_dim;
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      for (int64_t h = 0; h < l.num_kv_heads; ++h) {
        p.ReadRows(layer, h, false, l.page_tokens, k.data());
        p.ReadRows(layer, h, true, l.page_tokens, v.data());
        for (int64_t d = 0; d < l.head_dim; ++d) {
          ASSERT_EQ(k[off + d], Stored(l, Value(layer, h, pos, d, false, salt))) << "pos " << pos;
          ASSERT_EQ(v[off + d], Stored(l, Value(layer, h, pos, d, true, salt))) << "pos " << pos;
        }
      }
    }
  }
}

TEST(KvPages, LayoutSizes) {
  KvLayout l = SmallLayout();
  EXPECT_EQ(l.page_bytes(), 2 * 2 * 2 * 4 * 4 * 4);
  l.dtype = DType::kBF16;
  EXPECT_EQ(l.page_bytes(), 2 * 2 * 2 * 4 * 4 * 2);
  EXPECT_EQ(l.num_pages(0), 0);
  EXPECT_EQ(l.num_pages(4), 1);
  EXPECT_EQ(l.num_pages(5), 2);
}

TEST(KvPages, ShareKeepsRowsAndIds) {
  PageTable t(SmallLayout());
  Append(t, 10);
  auto view = t.Share();
  EXPECT_EQ(view->num_tokens(), 10);
  ASSERT_EQ(view->page_ids().size(), 3u);
  EXPECT_EQ(view->page_bytes(), SmallLayout().page_bytes());
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(view->page_ids()[i], t.page(i).id());
  ExpectRows(view->pages(), view->layout(), 0, 10);
}

TEST(KvPages, PrefixSharesPagesIncludingPartial) {
  PageTable t(SmallLayout());
  Append(t, 10);
  auto view = t.Share();
  auto prefix = view->Prefix(6);
  EXPECT_EQ(prefix->num_tokens(), 6);
  ASSERT_EQ(prefix->page_ids().size(), 2u);
  EXPECT_EQ(prefix->page_ids()[0], view->page_ids()[0]);
  EXPECT_EQ(prefix->page_ids()[1], view->page_ids()[1]);
  EXPECT_EQ(view->Prefix(0)->page_ids().size(), 0u);
  EXPECT_EQ(view->Prefix(8)->page_ids().size(), 2u);
}

TEST(KvPages, AppendAfterShareCopiesOnlyThePartialPage) {
  PageTable t(SmallLayout());
  Append(t, 6);  // pages: full [0,4), partial [4,6)
  auto snap = t.Share();
  const PageId full_id = t.page(0).id(), partial_id = t.page(1).id();
  Append(t, 3, /*salt=*/7);  // rows 6..8 differ from what a restore would write
  EXPECT_EQ(t.cow_copies(), 1);
  EXPECT_EQ(t.page(0).id(), full_id);     // full page still shared
  EXPECT_NE(t.page(1).id(), partial_id);  // partial page copied
  ExpectRows(snap->pages(), snap->layout(), 0, 6);  // snapshot intact
  // The copy carried rows 4, 5 over.
  std::vector<PagePtr> now;
  auto shared_now = t.Share();
  ExpectRows(shared_now->pages(), shared_now->layout(), 0, 6);
  ExpectRows(shared_now->pages(), shared_now->layout(), 6, 9, 7);
}

TEST(KvPages, UnsharedPartialPageIsWrittenInPlace) {
  PageTable t(SmallLayout());
  Append(t, 6);
  const PageId partial_id = t.page(1).id();
  { auto snap = t.Share(); }  // dropped: the page is ours alone again
  Append(t, 1);
  EXPECT_EQ(t.cow_copies(), 0);
  EXPECT_EQ(t.page(1).id(), partial_id);
}

TEST(KvPages, FullPagesAreNeverCopied) {
  PageTable t(SmallLayout());
  Append(t, 8);
  auto snap = t.Share();
  Append(t, 5);
  EXPECT_EQ(t.cow_copies(), 0);
  EXPECT_EQ(t.page(0).id(), snap->page_ids()[0]);
  EXPECT_EQ(t.page(1).id(), snap->page_ids()[1]);
}

TEST(KvPages, RestoreInsideAPageThenAppendLeavesSourceIntact) {
  PageTable a(SmallLayout());
  Append(a, 7);
  auto snap = a.Share();
  PageTable b(*snap, 5);  // rows [0,5) borrowed; row 5 lives in a shared page
  EXPECT_EQ(b.num_tokens(), 5);
  EXPECT_EQ(b.page(1).id(), snap->page_ids()[1]);
  Append(b, 2, /*salt=*/3);
  EXPECT_EQ(b.cow_copies(), 1);
  ExpectRows(snap->pages(), snap->layout(), 0, 7);  // a's rows 5, 6 untouched
  auto bv = b.Share();
  ExpectRows(bv->pages(), bv->layout(), 0, 5);
  ExpectRows(bv->pages(), bv->layout(), 5, 7, 3);
}

TEST(KvPages, ReferenceCountsFollowHolders) {
  std::weak_ptr<KvPage> first;
  std::shared_ptr<const PagedKv> snap;
  {
    PageTable t(SmallLayout());
    Append(t, 5);
    snap = t.Share();
    first = snap->pages()[0];
    EXPECT_EQ(first.use_count(), 2);  // table + snapshot
    auto prefix = snap->Prefix(2);
    EXPECT_EQ(first.use_count(), 3);
  }
  EXPECT_EQ(first.use_count(), 1);  // only the snapshot now
  snap.reset();
  EXPECT_TRUE(first.expired());
}

TEST(KvPages, IdsAreUniqueAcrossTablesAndCopies) {
  std::set<PageId> ids;
  int64_t total = 0;
  std::vector<std::shared_ptr<const PagedKv>> keep;
  for (int i = 0; i < 5; ++i) {
    PageTable t(SmallLayout());
    Append(t, 9);
    keep.push_back(t.Share());
    Append(t, 2);  // forces a copy of the partial page: a new id
    keep.push_back(t.Share());
  }
  for (const auto& v : keep) {
    for (PageId id : v->page_ids()) ids.insert(id);
    total += static_cast<int64_t>(v->page_ids().size());
  }
  // Each round: 3 pages, then the copy of the partial page: 4 distinct ids
  // (the two full pages are shared by both views).
  EXPECT_EQ(ids.size(), 5u * 4u);
  EXPECT_EQ(total, 5 * 6);
}

TEST(KvPages, Bf16PagesRoundAndCopyOnWriteLikeFp32) {
  KvLayout l = SmallLayout();
  l.dtype = DType::kBF16;
  PageTable t(l);
  Append(t, 6);
  auto snap = t.Share();
  Append(t, 3, /*salt=*/7);
  EXPECT_EQ(t.cow_copies(), 1);
  ExpectRows(snap->pages(), l, 0, 6);
  auto now = t.Share();
  ExpectRows(now->pages(), l, 0, 6);
  ExpectRows(now->pages(), l, 6, 9, 7);
  // The values chosen do not all fit bf16: the test sees rounding happen.
  EXPECT_NE(Stored(l, Value(1, 1, 5, 3, true)), Value(1, 1, 5, 3, true));
}

TEST(KvPages, ZeroLayerLayoutHoldsNoBytes) {
  KvLayout l = SmallLayout();
  l.num_layers = 0;
  PageTable t(l);
  t.Reserve(6);
  t.Commit(6);
  auto v = t.Share();
  EXPECT_EQ(v->page_bytes(), 0);
  EXPECT_EQ(v->page_ids().size(), 2u);
  EXPECT_EQ(v->num_tokens(), 6);
}

}  // namespace
}  // namespace lineage::cache
