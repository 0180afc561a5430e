// The stored form of PagedKv pages (kv_pages.h), shared by every StateCodec
// whose KV lives in PagedKv: a page payload of num_rows rows is
//   for each attention layer, K then V, for each kv head:
//     num_rows x head_dim fp32   (rows [0, num_rows) of that head's block)
// which is the in-RAM order with the unused rows left out, so encoding and
// decoding are one memcpy per (layer, K|V, head).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/disk/codec.h"
#include "cache/kv_pages.h"

namespace lineage::cache::disk {

int64_t PagedKvPayloadBytes(const KvLayout& layout, int64_t num_rows);

// `kv` must be a PagedKv of `layout`; InvalidArgument otherwise.
Status EncodePagedKvPage(const KvLayout& layout, const KvView& kv, int64_t page_index, int64_t num_rows,
                         std::vector<uint8_t>* out);

// Fresh pages (new PageIds) holding rows [0, num_tokens).
Result<KvPtr> DecodePagedKv(const KvLayout& layout, std::span<const PagePayload> pages, int64_t num_tokens);

}  // namespace lineage::cache::disk
