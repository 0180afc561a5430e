#include "engine/paged_attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels.h"

namespace lineage::engine {

void AttendRows(const AttentionRun& run, int64_t head, int64_t row_begin, int64_t row_end, const float* q,
                int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t hd = layout.head_dim;
  const int64_t page_tokens = layout.page_tokens;
  const int64_t kv_head = head / (run.num_heads / layout.num_kv_heads);
  thread_local std::vector<float> scores;
  for (int64_t t = row_begin; t < row_end; ++t) {
    const int64_t num_keys = run.start_pos + t + 1;
    if (static_cast<int64_t>(scores.size()) < num_keys) scores.resize(static_cast<size_t>(num_keys));
    const float* qrow = q + t * ldq + head * hd;
    float* orow = out + t * ldo + head * hd;
    for (int64_t p = 0; p * page_tokens < num_keys; ++p) {
      const float* keys = run.kv->page(p).k(run.layer, kv_head);
      const int64_t n = std::min(page_tokens, num_keys - p * page_tokens);
      float* s = scores.data() + p * page_tokens;
      for (int64_t j = 0; j < n; ++j) s[j] = kernels::Dot(qrow, keys + j * hd, hd) * run.scale;
    }
    kernels::Softmax(scores.data(), num_keys);
    std::memset(orow, 0, static_cast<size_t>(hd) * 4);
    for (int64_t p = 0; p * page_tokens < num_keys; ++p) {
      const float* values = run.kv->page(p).v(run.layer, kv_head);
      const int64_t n = std::min(page_tokens, num_keys - p * page_tokens);
      const float* s = scores.data() + p * page_tokens;
      for (int64_t j = 0; j < n; ++j) kernels::Axpy(s[j], values + j * hd, orow, hd);
    }
  }
}

}  // namespace lineage::engine
