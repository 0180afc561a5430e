#include "engine/kv_shift.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/rope.h"

namespace lineage::engine {
namespace {


}  // namespace

Status AppendShiftedRows(const model::ModelConfig& config, const cache::PagedKv& source, int64_t src_pos,
                         int64_t num_rows, Sequence& seq) {
  cache::PageTable& table = seq.kv();
  const cache::KvLayout& layout = table.layout();
  if (source.layout() != layout) return InvalidArgument("KV shift: the source pages have another layout");
  if (num_rows < 0 || src_pos < 0 || src_pos + num_rows > source.num_tokens()) {
    return OutOfRange("KV shift: rows [" + std::to_string(src_pos) + ", " + std::to_string(src_pos + num_rows) +
                      ") outside a source of " + std::to_string(source.num_tokens()) + " rows");
  }
  const int64_t rot_dims = std::min(config.rope_dims > 0 ? config.rope_dims : layout.head_dim, layout.head_dim);
  if (rot_dims % 2 != 0) return InvalidArgument("KV shift: odd rotary dimension count");
  if (num_rows == 0) return Status::Ok();

  const int64_t dst_pos = table.num_tokens(), delta = dst_pos - src_pos;
  const int64_t hd = layout.head_dim, page_tokens = layout.page_tokens;
  std::vector<float> rope(static_cast<size_t>(rot_dims));  // cos | sin of the angles for position delta
  RopeTable(delta, 1, rot_dims, config.rope_theta, rope.data());
  std::vector<float> k(static_cast<size_t>(page_tokens * hd)), v(k.size());

  table.Reserve(num_rows);
  // Source page by page: each page's rows [begin, end) of the range.
  for (int64_t row = src_pos; row < src_pos + num_rows;) {
    const cache::KvPage& page = *source.pages()[static_cast<size_t>(row / page_tokens)];
    const int64_t begin = row % page_tokens;
    const int64_t end = std::min(page_tokens, begin + (src_pos + num_rows - row));
    for (int64_t layer = 0; layer < layout.num_layers; ++layer) {
      for (int64_t h = 0; h < layout.num_kv_heads; ++h) {
        page.ReadRows(layer, h, false, end, k.data());
        page.ReadRows(layer, h, true, end, v.data());
        // The rows of one head are rotated by one angle set: as "heads" of one row.
        if (delta != 0) ApplyRope(k.data() + begin * hd, 1, 0, end - begin, hd, rot_dims, rope.data());
        for (int64_t r = begin; r < end; ++r) {
          table.WriteRow(layer, h, dst_pos + (row - src_pos) + (r - begin), k.data() + r * hd, v.data() + r * hd);
        }
      }
    }
    row += end - begin;
  }
  table.Commit(num_rows);
  return Status::Ok();
}

}  // namespace lineage::engine
