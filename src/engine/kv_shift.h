// KV shifting: appends KV rows taken from a snapshot at one position to a
// running sequence at another, for chunk reuse (DESIGN.md §3.7; llama-server's
// --cache-reuse).
//
// K rows are stored after RoPE (spec §3, §11). Rotations compose, so a key
// rotated for position s becomes the key for position d by one more rotation
// by d - s over the same rotary dims (the first config.rope_dims of each head,
// NeoX pairing, config.rope_theta); dims past rope_dims and V rows are copied
// unchanged. A shift by 0 copies the rows bit for bit.
//
// Only the rows move: for an attention-only model the result is the state a
// prefill would give only if the rows never attended to what came between
// (llama-server's approximation: rows after a deleted message were computed
// attending to it). A recurrent state cannot be spliced at all, so the
// server never shifts for a hybrid model; this primitive still works on the
// attention layers of any layout (tests use it on both).
//
// Thread-safety: reads the immutable source pages; writes `seq`, which the
// caller must not use concurrently (one thread per Sequence, as everywhere).
#pragma once

#include <cstdint>

#include "cache/kv_pages.h"
#include "core/status.h"
#include "engine/sequence.h"
#include "model/config.h"

namespace lineage::engine {

// Appends rows [src_pos, src_pos + num_rows) of `source` to `seq` at
// positions [seq.num_tokens(), seq.num_tokens() + num_rows), for every
// attention layer, K re-rotated by seq.num_tokens() - src_pos.
// Errors (nothing written): a source of another layout, a range outside the
// source, num_rows < 0.
Status AppendShiftedRows(const model::ModelConfig& config, const cache::PagedKv& source, int64_t src_pos,
                         int64_t num_rows, Sequence& seq);

}  // namespace lineage::engine
