// The prefixes a replica can restore, for KV events (kv_events.h): every RAM
// entry and every disk entry of this model up to its longest restore point.
// An entry's end always holds a full snapshot (DESIGN.md §3.3), so for the
// policy as it stands that is the whole entry; a disk entry whose state
// directory lacks its end counts only to its last state.
//
// Thread-safety: takes the cache's and the disk tier's own locks.
#pragma once

#include <vector>

#include "cache/disk/file_disk_tier.h"
#include "cache/lineage_cache.h"
#include "server/kv_events/kv_event_blocks.h"

namespace lineage::server {

// `disk` may be null.
std::vector<RestorablePrefix> RestorablePrefixes(const cache::LineageCache& cache, cache::disk::FileDiskTier* disk);

}  // namespace lineage::server
