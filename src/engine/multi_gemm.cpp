#include "engine/multi_gemm.h"

#include <vector>

#include "core/kernels.h"

namespace lineage::engine {
namespace {

// Rows below this use one barrier for all projections (see the header).
constexpr int64_t kSharedPassMaxRows = 8;
// Output rows per slice: a multiple of 32 keeps slices on quantised blocks'
// natural boundaries and gives the row kernel whole groups.
constexpr int64_t kSliceRows = 64;

TensorView Rows(const TensorView& w, int64_t r0, int64_t r1) {
  TensorView s = w;
  s.data = w.row_ptr(r0);
  s.shape = {r1 - r0, w.cols()};
  s.nbytes = RowBytes(w.dtype, w.cols()) * (r1 - r0);
  return s;
}

}  // namespace

void MultiGemm(std::initializer_list<GemmOut> outs, const float* x, int64_t ldx, int64_t T, ThreadPool* pool) {
  if (T >= kSharedPassMaxRows || pool == nullptr || pool->size() == 1) {
    for (const GemmOut& o : outs) kernels::Gemm(*o.w, x, ldx, o.y, o.ldy, T, pool);
    return;
  }
  struct Slice {
    const GemmOut* out;
    int64_t r0, r1;
  };
  std::vector<Slice> slices;
  for (const GemmOut& o : outs) {
    for (int64_t r = 0; r < o.w->rows(); r += kSliceRows) slices.push_back({&o, r, std::min(o.w->rows(), r + kSliceRows)});
  }
  pool->parallel_for(static_cast<int64_t>(slices.size()), [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Slice& s = slices[i];
      const TensorView part = Rows(*s.out->w, s.r0, s.r1);
      kernels::Gemm(part, x, ldx, s.out->y + s.r0, s.out->ldy, T, nullptr);
    }
  });
}

}  // namespace lineage::engine
