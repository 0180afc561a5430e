#include "server/generation/cache_lineages.h"

#include <algorithm>
#include <map>

#include "cache/lineage_map.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// One entry as both tiers know it; the same id names it in RAM and on disk.
struct Merged {
  cache::EntryId id = cache::kNoEntry;
  cache::Tokens tokens;
  bool anchor = false;
  const cache::LineageCache::EntryInfo* ram = nullptr;
  const cache::disk::StoredEntryInfo* disk = nullptr;
};

json Checkpoints(const Merged& m) {
  // (n, kind) -> {branch, in RAM, on disk}
  struct Seen {
    bool branch = false, ram = false, disk = false;
  };
  std::map<std::pair<int64_t, cache::PointKind>, Seen> points;
  if (m.ram)
    for (const cache::Checkpoint& c : m.ram->checkpoints) {
      Seen& s = points[{c.n, c.kind}];
      s.ram = true;
      s.branch = s.branch || c.branch;
    }
  if (m.disk)
    for (const cache::disk::StateRef& s : m.disk->states)
      if (s.n < static_cast<int64_t>(m.tokens.size())) points[{s.n, s.kind}].disk = true;
  json out = json::array();
  for (const auto& [key, s] : points) {
    json tiers = json::array();
    if (s.ram) tiers.push_back("ram");
    if (s.disk) tiers.push_back("disk");
    out.push_back({{"n", key.first}, {"kind", cache::PointKindName(key.second)}, {"branch", s.branch}, {"tiers", tiers}});
  }
  return out;
}

}  // namespace

json DescribeLineages(const cache::LineageCache& cache, cache::disk::FileDiskTier* disk) {
  const std::vector<cache::LineageCache::EntryInfo> ram = cache.Entries();
  std::vector<cache::disk::StoredEntryInfo> on_disk;
  if (disk) on_disk = disk->List();

  std::map<cache::EntryId, Merged> by_id;
  for (const auto& e : ram) {
    Merged& m = by_id[e.id];
    m.id = e.id;
    m.tokens = e.tokens;
    m.anchor = e.anchor;
    m.ram = &e;
  }
  for (const auto& e : on_disk) {
    Merged& m = by_id[e.id];
    if (!m.ram) {
      m.id = e.id;
      m.tokens = e.tokens;
      m.anchor = e.anchor;
    }
    m.disk = &e;
  }
  // Parenthood follows this order: anchors first (a conversation hangs under
  // the system prompt it extends), then the order entries were made in.
  std::vector<const Merged*> order;
  for (const auto& [id, m] : by_id)
    if (!m.tokens.empty()) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [](const Merged* a, const Merged* b) { return a->anchor > b->anchor; });
  std::vector<cache::TokenSpan> spans;
  for (const Merged* m : order) spans.emplace_back(m->tokens);
  const std::vector<cache::LineageLink> links = cache::LinkLineages(spans);

  json out = json::array();
  for (size_t i = 0; i < order.size(); ++i) {
    const Merged& m = *order[i];
    json tiers = json::array();
    if (m.ram) tiers.push_back("ram");
    if (m.disk) tiers.push_back("disk");
    json item = {{"id", m.id},
                 {"anchor", m.anchor},
                 {"tokens", m.tokens.size()},
                 {"tiers", tiers},
                 {"parent", links[i].parent < 0 ? json(nullptr) : json(order[links[i].parent]->id)},
                 {"shared_tokens", links[i].shared_tokens},
                 {"extended_by", links[i].extended_by}};
    item["ram"] = m.ram ? json{{"bytes", m.ram->bytes},
                               {"shared_bytes", m.ram->shared_bytes},
                               {"leases", m.ram->leases},
                               {"last_used_ms", m.ram->used_ms}}
                        : json(nullptr);
    item["disk"] = m.disk ? json{{"bytes", m.disk->bytes}, {"last_used_ms", m.disk->used_ms}} : json(nullptr);
    item["checkpoints"] = Checkpoints(m);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace lineage::server
