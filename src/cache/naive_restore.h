// The restore-point rule of DESIGN.md §3.1 written the plain way: one
// longest-common-prefix scan per entry. It is the specification the
// PrefixTree search is tested against and the baseline bench_lookup measures.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/restore_search.h"

namespace lineage::cache {

struct NaiveEntry {
  EntryId id = kNoEntry;
  TokenSpan tokens;
  std::vector<Checkpoint> checkpoints;
  uint64_t recency = 0;  // larger is more recent
};

RestoreSearch NaiveRestorePoint(const std::vector<NaiveEntry>& entries, TokenSpan prompt, bool recurrent);

}  // namespace lineage::cache
