#include "engine/paged_attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"

namespace lineage::engine {
namespace {

// Most query rows per attention task: enough rows (x the GQA group) share
// each key row read, and a prefill chunk still splits into many tasks.
constexpr int64_t kMaxRowsPerTask = 64;

}  // namespace
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


KeyParts KeyPartsOf(const AttentionRun& run, int64_t pos, int64_t rows) {
  const cache::KvLayout& layout = run.kv->layout();
  if (layout.head_dim % 16 != 0 || kDecodePartKeys % layout.page_tokens != 0) return {};
  // Several rows: parts of the least multiple of kDecodePartKeys that keeps
  // them to kMaxBlockParts whole parts before the block's own.
  const int64_t whole = pos / kDecodePartKeys;
  const int64_t part_keys = rows == 1 || run.rows_as_decode ? kDecodePartKeys : kDecodePartKeys * std::max<int64_t>(1, (whole + kMaxBlockParts - 1) / kMaxBlockParts);
  const int64_t parts = pos / part_keys + 1;
  return parts >= 2 ? KeyParts{part_keys, parts} : KeyParts{};
}

namespace {

// The calling thread's tile after every query head of `kv_head` for rows
// [row_begin, row_begin + num_rows) has seen keys [first_key, end_key) (the
// keys past the last row's are never read); first_key is a multiple of the
// page size. The caller finishes it.
kernels::AttentionTile& TileOver(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t num_rows,
                                 const float* q, int64_t ldq, float* out, int64_t ldo, int64_t first_key,
                                 int64_t end_key) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t hd = layout.head_dim, page_tokens = layout.page_tokens;
  const int64_t group = run.num_heads / layout.num_kv_heads;
  kernels::AttentionQueries queries;
  queries.q = q + row_begin * ldq + kv_head * group * hd;
  queries.ldq = ldq;
  queries.out = out;
  queries.ldo = ldo;
  queries.num_rows = num_rows;
  queries.group = group;
  queries.head_dim = hd;
  queries.first_pos = run.start_pos + row_begin;
  queries.scale = run.scale;
  queries.rows_as_decode = run.rows_as_decode;
  thread_local kernels::AttentionTile tile;
  tile.Begin(queries);
  end_key = std::min(end_key, tile.last_key() + 1);
  for (int64_t key = first_key; key < end_key; key += page_tokens) {
    const cache::KvPage& page = run.kv->page(key / page_tokens);
    tile.AddKeys(key, std::min(page_tokens, end_key - key), page.k(run.layer, kv_head), page.v(run.layer, kv_head),
                 layout.dtype);
  }
  return tile;
}

}  // namespace

void AttendGroupPart(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, int64_t first_key,
                     int64_t end_key, const float* q, int64_t ldq, float* out, int64_t ldo, float* max, float* sum) {
  TileOver(run, kv_head, row_begin, row_end - row_begin, q, ldq, out, ldo, first_key, end_key).FinishPart(max, sum);
}

void AttendGroup(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                 int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  if (layout.head_dim % 16 != 0) return AttendGroupByRows(run, kv_head, row_begin, row_end, q, ldq, out, ldo);
  const int64_t first_head = kv_head * (run.num_heads / layout.num_kv_heads);
  TileOver(run, kv_head, row_begin, row_end - row_begin, q, ldq, out + row_begin * ldo + first_head * layout.head_dim,
           ldo, 0, run.start_pos + row_end)
      .Finish();
}

void AttendRuns(std::span<const AttentionRows> runs, ThreadPool* pool, AttendGroupFn group_fn, bool split) {
  if (runs.empty()) return;
  if (group_fn == nullptr) group_fn = AttendGroup;
  const cache::KvLayout& layout = runs[0].run.kv->layout();
  const int64_t nkv = layout.num_kv_heads, hd = layout.head_dim;
  const int64_t group = runs[0].run.num_heads / nkv, ld = runs[0].run.num_heads * hd;
  // Tasks: (run, kv head, block of query rows). A run is cut into blocks of
  // equal size (at most kMaxRowsPerTask rows), so a short run such as a
  // 40-token turn does not leave one thread a sliver. The pool hands each
  // thread a contiguous range of tasks, and a causal block costs in
  // proportion to its last row, so blocks are dealt cheap and dear
  // alternately to even the ranges out. A short run over a long context is
  // instead cut at its part boundaries into blocks that each take a task per
  // part of their keys, whose outputs the merge below combines: block
  // outputs at `out_base` of the part buffers, part k's rows after k - 1
  // parts' worth, and their maxes and sums likewise at `stat_base`.
  struct Task {
    int64_t run, kv_head, row0, row1;
    int64_t part = -1, parts = 0, part_keys = 0;  // part >= 0: keys of part `part` of `parts` only
    int64_t out_base = 0, stat_base = 0;
  };
  // Reused across calls; the workers reach the caller's through the
  // references (a lambda naming a thread_local directly would see the
  // worker's own).
  thread_local std::vector<Task> task_storage;
  std::vector<Task>& tasks = task_storage;
  tasks.clear();
  int64_t out_floats = 0, stat_floats = 0;
  for (int64_t ri = 0; ri < static_cast<int64_t>(runs.size()); ++ri) {
    const AttentionRows& r = runs[ri];
    const int64_t T = r.num_rows, p0 = r.run.start_pos;
    if (const KeyParts first = split && T <= kMaxRowsPerTask ? KeyPartsOf(r.run, p0, T) : KeyParts{};
        first.parts > 1) {
      for (int64_t row0 = 0; row0 < T;) {
        // The block's rows up to the next part boundary (a run shorter than
        // a part crosses at most one).
        const int64_t parts = (p0 + row0) / first.part_keys + 1;
        const int64_t row1 = std::min(T, parts * first.part_keys - p0), rows = row1 - row0;
        for (int64_t h = 0; h < nkv; ++h) {
          for (int64_t p = 0; p < parts; ++p)
            tasks.push_back({ri, h, row0, row1, p, parts, first.part_keys, out_floats, stat_floats});
          out_floats += parts * rows * group * hd;
          stat_floats += parts * rows * group;
        }
        row0 = row1;
      }
      continue;
    }
    const int64_t blocks = (T + kMaxRowsPerTask - 1) / kMaxRowsPerTask;
    const int64_t rows = (T + blocks - 1) / blocks;
    for (int64_t i = 0; i < blocks; ++i) {
      const int64_t b = i % 2 == 0 ? i / 2 : blocks - 1 - i / 2;
      for (int64_t h = 0; h < nkv; ++h) tasks.push_back({ri, h, b * rows, std::min(T, (b + 1) * rows)});
    }
  }
  // The split blocks' unnormalised output rows, running maxes and sums.
  thread_local std::vector<float> part_out_storage, part_max_storage, part_sum_storage;
  std::vector<float>& part_out = part_out_storage;
  std::vector<float>& part_max = part_max_storage;
  std::vector<float>& part_sum = part_sum_storage;
  part_out.resize(static_cast<size_t>(out_floats));
  part_max.resize(static_cast<size_t>(stat_floats));
  part_sum.resize(static_cast<size_t>(stat_floats));
  auto run_tasks = [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Task& t = tasks[i];
      const AttentionRows& r = runs[t.run];
      if (t.part >= 0) {
        const int64_t queries = (t.row1 - t.row0) * group;
        AttendGroupPart(r.run, t.kv_head, t.row0, t.row1, t.part * t.part_keys, (t.part + 1) * t.part_keys, r.q, ld,
                        part_out.data() + t.out_base + t.part * queries * hd, group * hd,
                        part_max.data() + t.stat_base + t.part * queries,
                        part_sum.data() + t.stat_base + t.part * queries);
      } else {
        group_fn(r.run, t.kv_head, t.row0, t.row1, r.q, ld, r.out, ld);
      }
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(static_cast<int64_t>(tasks.size()), run_tasks);
  } else {
    run_tasks(0, static_cast<int64_t>(tasks.size()), 0);
  }
  for (const Task& t : tasks) {
    if (t.part != 0) continue;  // one merge per split (block, kv head), at its first part
    const int64_t queries = (t.row1 - t.row0) * group;
    for (int64_t i = 0; i < queries; ++i) {
      const int64_t row = t.row0 + i / group, g = i % group;
      kernels::MergeAttentionParts(t.parts, part_out.data() + t.out_base + i * hd, queries * hd,
                                   part_max.data() + t.stat_base + i, part_sum.data() + t.stat_base + i, queries, hd,
                                   runs[t.run].out + row * ld + (t.kv_head * group + g) * hd);
    }
  }
}

}  // namespace lineage::engine
