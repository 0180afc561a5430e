// The lineages a server's cache holds, in RAM and on disk, as the JSON that
// /v1/cache/lineages returns and the cache page draws (docs/cache-page.md):
// one object per stored entry with its length, tiers, bytes, last use, its
// checkpoints by kind, and its place in the tree (cache/lineage_map.h).
// Reads the cache under its lock once and the disk tier's index once.
#pragma once

#include <nlohmann/json.hpp>

#include "cache/disk/file_disk_tier.h"
#include "cache/lineage_cache.h"

namespace lineage::server {

// `disk` may be null (RAM only).
nlohmann::ordered_json DescribeLineages(const cache::LineageCache& cache, cache::disk::FileDiskTier* disk);

}  // namespace lineage::server
