#include "sim/replicas.h"

#include "cache/memory_disk_tier.h"
#include "sim/policies/lineage_adapter.h"

namespace lineage::sim {

Status ReplicaDiskView::Put(const cache::DiskRecord& record) {
  cache::DiskRecord tagged = record;
  tagged.id = Global(record.id);
  return base_->Put(tagged);
}

ReplicaSetPolicy::ReplicaSetPolicy(const ModelShape& shape, const PolicyOptions& per_replica,
                                   const ReplicaOptions& options)
    : options_(options), rng_(options.seed) {
  const int64_t n = std::max<int64_t>(1, options.replicas);
  name_ = "lineage x" + std::to_string(n) + (options.routing == Routing::kSessionHash ? " hash" : " random") +
          (options.shared_disk ? " shared" : " private");
  if (options.shared_disk && per_replica.disk_budget_bytes > 0) {
    shared_ = std::make_unique<cache::MemoryDiskTier>(per_replica.disk_budget_bytes * n, &pages_);
  }
  for (int64_t i = 0; i < n; ++i) {
    cache::DiskTier* disk = nullptr;
    if (shared_) {
      views_.push_back(std::make_unique<ReplicaDiskView>(shared_.get(), i));
      disk = views_.back().get();
    }
    replicas_.push_back(std::make_unique<LineagePolicy>(shape, per_replica, /*exact=*/false, cache::CacheOptions{},
                                                        name_, disk, &pages_));
  }
}

ReplicaSetPolicy::~ReplicaSetPolicy() {
  replicas_.clear();  // the caches hold views of the shared tier
  views_.clear();
}

Admission ReplicaSetPolicy::Admit(const RequestView& r, int64_t now_ms) {
  const size_t n = replicas_.size();
  size_t to = 0;
  if (options_.routing == Routing::kSessionHash) {
    // A stable mix of the session index, as a proxy hashes x-session-id.
    uint64_t x = r.request->session + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    to = static_cast<size_t>((x ^ (x >> 31)) % n);
  } else {
    to = static_cast<size_t>(rng_() % n);
  }
  routed_[r.index] = to;
  return replicas_[to]->Admit(r, now_ms);
}

void ReplicaSetPolicy::Commit(const RequestView& r, int64_t now_ms) { replicas_[routed_.at(r.index)]->Commit(r, now_ms); }

void ReplicaSetPolicy::Finish(const RequestView& r, int64_t now_ms) {
  auto it = routed_.find(r.index);
  if (it == routed_.end()) return;
  replicas_[it->second]->Finish(r, now_ms);
  routed_.erase(it);
}

PolicyCounters ReplicaSetPolicy::counters() const {
  PolicyCounters sum;
  for (const auto& p : replicas_) {
    const PolicyCounters c = p->counters();
    sum.ram_bytes += c.ram_bytes;
    sum.ram_peak_bytes += c.ram_peak_bytes;  // per-replica peaks: what N machines need
    sum.evictions += c.evictions;
    if (!shared_) {
      sum.disk_bytes += c.disk_bytes;
      sum.disk_written_bytes += c.disk_written_bytes;
      sum.disk_read_bytes += c.disk_read_bytes;
    }
  }
  if (shared_) {
    const cache::DiskStats d = shared_->Stats();
    sum.disk_bytes = d.bytes;
    sum.disk_written_bytes = d.bytes_written;
    sum.disk_read_bytes = d.bytes_read;
    // Each replica's evictions included the shared tier's; count them once.
    sum.evictions -= static_cast<int64_t>(replicas_.size() - 1) * d.evictions;
  }
  return sum;
}

Status ReplicaSetPolicy::status() const {
  for (const auto& p : replicas_) {
    if (Status st = p->status(); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace lineage::sim
