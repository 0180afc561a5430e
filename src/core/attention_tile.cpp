#include "core/attention_tile.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "core/attention_tile_internal.h"
#include "core/kernels.h"

namespace lineage::kernels {
namespace {

constexpr int64_t kQueryAlign = 16;  // a whole number of vectors on either ISA
// The running max before any key: finite, so exp(-inf - max) of a masked
// score is 0 and exp(kMaxFloor - max) of the first real block's rescale
// flushes to 0, where -inf - -inf would be a NaN.
constexpr float kMaxFloor = -1.0e38f;

struct IsaKernels {
  decltype(&avx2::AttnScores) scores;
  decltype(&avx2::AttnScoresFew) scores_few;
  decltype(&avx2::AttnSoftmax) softmax;
  decltype(&avx2::AttnValues) values;
};

const IsaKernels& Kernels() {
  static const IsaKernels k512{avx512::AttnScores, avx512::AttnScoresFew, avx512::AttnSoftmax, avx512::AttnValues};
  static const IsaKernels k2{avx2::AttnScores, avx2::AttnScoresFew, avx2::AttnSoftmax, avx2::AttnValues};
  return ActiveIsa() == Isa::kAvx512 ? k512 : k2;
}

}  // namespace

void AttentionTile::Begin(const AttentionQueries& queries) {
  assert(queries.head_dim % 16 == 0 && queries.num_rows > 0 && queries.group > 0);
  q_ = queries;
  const int64_t hd = q_.head_dim;
  num_queries_ = q_.num_rows * q_.group;
  ldq_t_ = (num_queries_ + kQueryAlign - 1) / kQueryAlign * kQueryAlign;
  qt_.assign(static_cast<size_t>(hd * ldq_t_), 0.0f);
  s_.resize(static_cast<size_t>(kKeyBlock * ldq_t_));
  limit_.resize(static_cast<size_t>(ldq_t_));
  max_.assign(static_cast<size_t>(ldq_t_), kMaxFloor);
  sum_.assign(static_cast<size_t>(ldq_t_), 0.0f);
  alpha_.resize(static_cast<size_t>(ldq_t_));
  out_rows_.resize(static_cast<size_t>(num_queries_));
  few_ = (q_.rows_as_decode ? q_.group : num_queries_) <= kFewQueries;
  if (few_) {
    q_rows_.resize(static_cast<size_t>(num_queries_ * hd));
    // The few-query kernel leaves the padding columns alone: keep them finite.
    std::fill(s_.begin(), s_.end(), 0.0f);
  }
  for (int64_t i = 0; i < num_queries_; ++i) {
    const int64_t r = i / q_.group, g = i % q_.group;
    const float* qi = q_.q + r * q_.ldq + g * hd;
    for (int64_t d = 0; d < hd; ++d) qt_[d * ldq_t_ + i] = qi[d] * q_.scale;
    if (few_) {
      for (int64_t d = 0; d < hd; ++d) q_rows_[i * hd + d] = qi[d] * q_.scale;
    }
    limit_[i] = static_cast<float>(q_.first_pos + r);
    out_rows_[i] = q_.out + r * q_.ldo + g * hd;
    std::memset(out_rows_[i], 0, static_cast<size_t>(hd) * sizeof(float));
  }
  // Padding lanes act as the last row; their results are never stored.
  for (int64_t i = num_queries_; i < ldq_t_; ++i) limit_[i] = static_cast<float>(last_key());
}

void AttentionTile::AddKeys(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype) {
  const int64_t row_bytes = q_.head_dim * (dtype == DType::kBF16 ? 2 : 4);
  for (int64_t j = 0; j < n; j += kKeyBlock) {
    const int64_t offset = j * row_bytes;
    AddBlock(first_key + j, std::min(kKeyBlock, n - j), static_cast<const char*>(k) + offset,
             static_cast<const char*>(v) + offset, dtype, nullptr);
  }
}

void AttentionTile::AddKeysMasked(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype,
                                  const uint8_t* visible) {
  const int64_t row_bytes = q_.head_dim * (dtype == DType::kBF16 ? 2 : 4);
  for (int64_t j = 0; j < n; j += kKeyBlock) {
    const int64_t offset = j * row_bytes;
    AddBlock(first_key + j, std::min(kKeyBlock, n - j), static_cast<const char*>(k) + offset,
             static_cast<const char*>(v) + offset, dtype, visible + j * q_.num_rows);
  }
}

void AttentionTile::AddBlock(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype,
                             const uint8_t* visible) {
  if (first_key > last_key()) return;
  n = std::min(n, last_key() - first_key + 1);
  // Rows before first_row see none of these keys; whole vectors of them are skipped.
  const int64_t first_row = std::max<int64_t>(0, first_key - q_.first_pos);
  const int64_t q_begin = first_row * q_.group / kQueryAlign * kQueryAlign;
  const bool masked = first_key + n - 1 > static_cast<int64_t>(limit_[q_begin]);
  float* s = s_.data();
  const IsaKernels& isa = Kernels();
  if (few_) {
    // Groups of at most kFewQueries: a query's dot products do not depend on its neighbours.
    for (int64_t i = 0; i < num_queries_; i += kFewQueries)
      isa.scores_few(q_rows_.data() + i * q_.head_dim, std::min(kFewQueries, num_queries_ - i), q_.head_dim, k, v,
                     dtype, n, s + i, ldq_t_);
  } else {
    isa.scores(qt_.data(), ldq_t_, q_begin, ldq_t_, q_.head_dim, k, dtype, n, s);
  }
  if (visible != nullptr) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = q_begin; i < num_queries_; ++i)
        if (!visible[j * q_.num_rows + i / q_.group]) s[j * ldq_t_ + i] = -INFINITY;
  }
  isa.softmax(s, ldq_t_, n, q_begin, ldq_t_, first_key, masked, limit_.data(), max_.data(), sum_.data(),
              alpha_.data());
  isa.values(s, ldq_t_, n, v, dtype, q_.head_dim, out_rows_.data(), alpha_.data(), q_begin, num_queries_);
}

void AttentionTile::Finish() {
  for (int64_t i = 0; i < num_queries_; ++i) Scale(out_rows_[i], 1.0f / sum_[i], q_.head_dim);
}

void AttentionTile::FinishPart(float* max, float* sum) {
  std::copy_n(max_.begin(), num_queries_, max);
  std::copy_n(sum_.begin(), num_queries_, sum);
}

void MergeAttentionParts(int64_t parts, const float* part_out, int64_t out_stride, const float* part_max,
                         const float* part_sum, int64_t stride, int64_t head_dim, float* out) {
  float top = part_max[0];
  for (int64_t p = 1; p < parts; ++p) top = std::max(top, part_max[p * stride]);
  float total = 0;
  std::fill_n(out, head_dim, 0.0f);
  for (int64_t p = 0; p < parts; ++p) {
    const float w = std::exp(part_max[p * stride] - top);
    total += w * part_sum[p * stride];
    Axpy(w, part_out + p * out_stride, out, head_dim);
  }
  Scale(out, 1.0f / total, head_dim);
}

}  // namespace lineage::kernels
