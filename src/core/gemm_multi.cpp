// GemmMulti (gemm_multi.h): the row regime of Gemm for one or several
// targets sharing their input rows.
#include "core/gemm_multi.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <vector>

#include "core/gemm_internal.h"
#include "core/kernels.h"
#include "core/lane_order.h"

namespace lineage::kernels {
namespace {

// Chunks: about kChunksPerThread per thread and call, so that a thread the
// OS deschedules leaves most of its share to the others, within
// [kMinChunkBytes, kMaxChunkBytes]: smaller chunks pay their claim too
// often, larger ones make the last chunk of a call (when one thread may
// already be idle) long.
constexpr int64_t kChunksPerThread = 16;
constexpr int64_t kMinChunkBytes = 64 << 10, kMaxChunkBytes = 1 << 20;
// Pools larger than this share its parts (one atomic counter each).
constexpr int kMaxParts = 64;
// A call reading less than this runs on the calling thread: waking the pool
// would cost about as much as it saves.
constexpr int64_t kInlineBytes = 64 << 10;

struct Chunk {
  int64_t target, row_begin, row_end;
};

}  // namespace

void GemmMulti(std::span<const GemmTarget> targets, const float* X, int64_t ldx, int64_t T, ThreadPool* pool) {
  if (T <= 0) return;
  // Per calling thread, reused across calls; the pool's workers read the
  // caller's copies through these references (a lambda naming a
  // thread_local directly would see the worker's own).
  thread_local std::vector<float> split_storage;
  thread_local QuantizedActivations q_storage;
  thread_local QuantizedActivationsK qk_storage;
  thread_local std::vector<Chunk> chunk_storage;
  thread_local std::vector<int64_t> row_target_storage;
  std::vector<float>& split = split_storage;
  QuantizedActivations& q = q_storage;
  QuantizedActivationsK& qk = qk_storage;
  std::vector<Chunk>& chunks = chunk_storage;

  const int threads = pool != nullptr ? pool->size() : 1;
  const bool wide = ActiveIsa() == Isa::kAvx512;
  int64_t cols = -1, total_bytes = 0;
  bool need_split = false, need_q = false, need_qk = false, need_lanes = false;
  const bool int8 = !ExactQ8();  // read once; GemmRows follows qa
  std::vector<int64_t>& row_targets = row_target_storage;  // indices of the targets for the row kernels
  row_targets.clear();
  for (size_t i = 0; i < targets.size(); ++i) {
    const TensorView& w = *targets[i].w;
    if (w.rows() <= 0) continue;
    if (T >= TileMinTokens(w.dtype)) {  // Gemm tiles it
      Gemm(w, X, ldx, targets[i].y, targets[i].ldy, T, pool);
      continue;
    }
    assert(cols < 0 || w.cols() == cols);
    cols = w.cols();
    need_split |= w.dtype == DType::kBF16;
    need_q |= int8 && IntActivationsFor(w.dtype) == IntActivations::kBlock32;
    need_qk |= int8 && IntActivationsFor(w.dtype) == IntActivations::kBlock256;
    need_lanes |= int8 && quant::IsLaneOrder(w.dtype);
    total_bytes += RowBytes(w.dtype, cols) * w.rows();
    row_targets.push_back(static_cast<int64_t>(i));
  }
  if (row_targets.empty()) return;
  if (need_split) {
    split.resize(static_cast<size_t>(T * cols));
    if (wide) {
      avx512::SplitActivations(X, ldx, T, cols, split.data());
    } else {
      avx2::SplitActivations(X, ldx, T, cols, split.data());
    }
  }
  if (need_q) QuantizeActivations(X, ldx, T, cols, &q);
  if (need_qk) QuantizeActivationsK(X, ldx, T, cols, &qk, need_lanes);

  const int64_t chunk_bytes =
      std::clamp(total_bytes / (threads * kChunksPerThread), kMinChunkBytes, kMaxChunkBytes);
  chunks.clear();
  for (int64_t i : row_targets) {
    const TensorView& w = *targets[i].w;
    // Whole groups of four rows (the kernels' unit) per chunk.
    const int64_t step = std::max<int64_t>(4, chunk_bytes / RowBytes(w.dtype, cols) / 4 * 4);
    for (int64_t r = 0; r < w.rows(); r += step) chunks.push_back({i, r, std::min(w.rows(), r + step)});
  }
  const RowActivations qa{need_q ? &q : nullptr, need_qk ? &qk : nullptr};
  auto run = [&](const Chunk& c) {
    const GemmTarget& t = targets[c.target];
    const bool bf16 = t.w->dtype == DType::kBF16;
    const float* x = bf16 ? split.data() : X;
    const int64_t lx = bf16 ? cols : ldx;
    if (wide) {
      avx512::GemmRows(*t.w, c.row_begin, c.row_end, x, lx, qa, t.y, t.ldy, T);
    } else {
      avx2::GemmRows(*t.w, c.row_begin, c.row_end, x, lx, qa, t.y, t.ldy, T);
    }
  };
  if (threads == 1 || chunks.size() == 1 || total_bytes * T < kInlineBytes) {
    for (const Chunk& c : chunks) run(c);
    return;
  }
  // Part p of the pool owns the chunks [n p / P, n (p + 1) / P) and claims
  // them in order, so a thread streams through contiguous weights (its
  // prefetches run on into its next chunk); when its own are gone it claims
  // what is left of the other parts, so a thread the OS deschedules, or a
  // part no worker has picked up yet, is finished by the others.
  struct alignas(64) Range {
    std::atomic<size_t> next;
    size_t end;
  };
  const size_t n = chunks.size();
  std::array<Range, kMaxParts> ranges;
  const int parts = std::min(threads, kMaxParts);
  for (int p = 0; p < parts; ++p) {
    ranges[p].next.store(n * p / parts, std::memory_order_relaxed);
    ranges[p].end = n * (p + 1) / parts;
  }
  pool->parallel_for(parts, [&](int64_t p0, int64_t, int) {
    for (int k = 0; k < parts; ++k) {
      Range& r = ranges[(p0 + k) % parts];
      for (size_t i; (i = r.next.fetch_add(1, std::memory_order_relaxed)) < r.end;) run(chunks[i]);
    }
  });
}

}  // namespace lineage::kernels
