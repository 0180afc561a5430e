#include "engine/paged_attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"

namespace lineage::engine {

void AttendGroupByRows(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                       int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t hd = layout.head_dim, page_tokens = layout.page_tokens;
  const int64_t group = run.num_heads / layout.num_kv_heads;
  const int64_t first_head = kv_head * group;
  const int64_t num_queries = (row_end - row_begin) * group;
  const int64_t max_keys = run.start_pos + row_end;  // keys the last row sees
  // scores[(t - row_begin) * group + g][key], row stride max_keys.
  thread_local std::vector<float> scores;
  if (static_cast<int64_t>(scores.size()) < num_queries * max_keys) {
    scores.resize(static_cast<size_t>(num_queries * max_keys));
  }
  auto query = [&](int64_t t, int64_t g) { return q + t * ldq + (first_head + g) * hd; };
  auto score_row = [&](int64_t t, int64_t g) { return scores.data() + ((t - row_begin) * group + g) * max_keys; };

  // Calls fn(first_key, n, rows) for every page the block sees, in order:
  // rows holds n K (or V) rows of keys [first_key, first_key + n). Walking a
  // page at a time keeps its rows in cache while every query row uses them,
  // and keeps each query's scores contiguous. fp32 pages are read in place;
  // bf16 ones are widened a page at a time.
  thread_local std::vector<float> widened;
  auto for_each_page = [&](bool values, auto&& fn) {
    for (int64_t p = 0; p * page_tokens < max_keys; ++p) {
      const cache::KvPage& page = run.kv->page(p);
      const int64_t n = std::min(page_tokens, max_keys - p * page_tokens);
      const float* rows;
      if (layout.dtype == DType::kF32) {
        rows = static_cast<const float*>(values ? page.v(run.layer, kv_head) : page.k(run.layer, kv_head));
      } else {
        widened.resize(static_cast<size_t>(page_tokens * hd));
        page.ReadRows(run.layer, kv_head, values, n, widened.data());
        rows = widened.data();
      }
      fn(p * page_tokens, n, rows);
    }
  };
  // Query row t sees keys [0, start_pos + t].
  auto visible = [&](int64_t t, int64_t first_key, int64_t n) {
    return std::min(n, run.start_pos + t + 1 - first_key);
  };
  for_each_page(false, [&](int64_t k0, int64_t n, const float* krows) {
    for (int64_t t = std::max(row_begin, k0 - run.start_pos); t < row_end; ++t) {
      const int64_t m = visible(t, k0, n);
      for (int64_t g = 0; g < group; ++g) {
        const float* qv = query(t, g);
        float* sr = score_row(t, g) + k0;
        for (int64_t j = 0; j < m; ++j) sr[j] = kernels::Dot(qv, krows + j * hd, hd) * run.scale;
      }
    }
  });
  for (int64_t t = row_begin; t < row_end; ++t) {
    for (int64_t g = 0; g < group; ++g) {
      kernels::Softmax(score_row(t, g), run.start_pos + t + 1);
      std::memset(out + t * ldo + (first_head + g) * hd, 0, static_cast<size_t>(hd) * 4);
    }
  }
  for_each_page(true, [&](int64_t k0, int64_t n, const float* vrows) {
    for (int64_t t = std::max(row_begin, k0 - run.start_pos); t < row_end; ++t) {
      const int64_t m = visible(t, k0, n);
      for (int64_t g = 0; g < group; ++g) {
        const float* sr = score_row(t, g) + k0;
        float* o = out + t * ldo + (first_head + g) * hd;
        for (int64_t j = 0; j < m; ++j) kernels::Axpy(sr[j], vrows + j * hd, o, hd);
      }
    }
  });
}


void AttendGroup(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                 int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t hd = layout.head_dim, page_tokens = layout.page_tokens;
  if (hd % 16 != 0) return AttendGroupByRows(run, kv_head, row_begin, row_end, q, ldq, out, ldo);
  const int64_t group = run.num_heads / layout.num_kv_heads;
  const int64_t first_head = kv_head * group;
  kernels::AttentionQueries queries;
  queries.q = q + row_begin * ldq + first_head * hd;
  queries.ldq = ldq;
  queries.out = out + row_begin * ldo + first_head * hd;
  queries.ldo = ldo;
  queries.num_rows = row_end - row_begin;
  queries.group = group;
  queries.head_dim = hd;
  queries.first_pos = run.start_pos + row_begin;
  queries.scale = run.scale;
  thread_local kernels::AttentionTile tile;
  tile.Begin(queries);
  const int64_t num_keys = tile.last_key() + 1;
  for (int64_t p = 0; p * page_tokens < num_keys; ++p) {
    const cache::KvPage& page = run.kv->page(p);
    tile.AddKeys(p * page_tokens, std::min(page_tokens, num_keys - p * page_tokens), page.k(run.layer, kv_head),
                 page.v(run.layer, kv_head), layout.dtype);
  }
  tile.Finish();
}

}  // namespace lineage::engine
