#include "cache/explanation.h"

#include <sstream>

namespace lineage::cache {

const char* PointKindName(PointKind kind) {
  switch (kind) {
    case PointKind::kEntryEnd: return "entry_end";
    case PointKind::kFinal: return "final";
    case PointKind::kGuard: return "guard";
    case PointKind::kAnchor: return "anchor";
    case PointKind::kDivergence: return "divergence";
    case PointKind::kHistoryEnd: return "history_end";
    case PointKind::kPeriodic: return "periodic";
    case PointKind::kPrefix: return "prefix";
  }
  return "?";
}

const char* RestoreKindName(PointKind kind, bool anchor_entry) {
  return anchor_entry && kind == PointKind::kEntryEnd ? PointKindName(PointKind::kAnchor) : PointKindName(kind);
}

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kNone: return "none";
    case Tier::kRam: return "ram";
    case Tier::kDisk: return "disk";
  }
  return "?";
}

namespace {

void Put(std::ostream& os, const PointRef& p) {
  if (p.entry == kNoEntry) {
    os << "cold";
    return;
  }
  os << p.length << " (" << RestoreKindName(p.kind, p.anchor) << " of entry " << p.entry << ", " << TierName(p.tier) << ")";
}

}  // namespace

std::string LookupExplanation::ToString() const {
  std::ostringstream os;
  os << "restore ";
  Put(os, chosen);
  os << " of " << prompt_tokens << " tokens";
  if (disk_consulted && chosen.tier != Tier::kDisk) {
    os << "; disk had nothing longer";
  } else if (chosen.tier == Tier::kDisk) {
    os << "; best in RAM ";
    Put(os, best_ram);
  }
  os << "; closest stored sequence: ";
  if (closest_entry == kNoEntry) {
    os << "none";
  } else {
    os << "entry " << closest_entry << " sharing " << closest_shared_tokens << " tokens";
    if (closest_shared_tokens > chosen.length + 1) {
      os << " (no restore point stored between " << chosen.length << " and " << closest_shared_tokens << ")";
    }
  }
  os << "; capture:";
  if (planned.empty()) os << " none";
  for (const PlannedCapture& c : planned) os << " " << PointKindName(c.kind) << "@" << c.n;
  return os.str();
}

std::string CommitExplanation::ToString() const {
  std::ostringstream os;
  os << "entry " << entry;
  if (parent != kNoEntry) os << " from " << parent << (parent_was_absorbed ? " (already absorbed: sibling)" : "");
  auto list = [&](const char* name, const std::vector<EntryId>& ids) {
    if (ids.empty()) return;
    os << "; " << name;
    for (EntryId id : ids) os << " " << id;
  };
  list("absorbed", absorbed);
  list("anchored", anchors_created);
  if (!thinned.empty()) {
    os << "; thinned";
    for (const ThinnedPoint& t : thinned) os << " " << PointKindName(t.kind) << "@" << t.n << "/" << t.entry;
  }
  if (!evicted.empty()) {
    os << "; evicted";
    for (const EvictedEntry& e : evicted) {
      os << " " << e.entry << (e.anchor ? "(anchor)" : "") << "->" << TierName(e.now_in);
    }
  }
  return os.str();
}

}  // namespace lineage::cache
