// Replicas: N `lineage serve` replicas in the simulator (docs/sim.md,
// "Replicas"), each running the lineage policy with its own RAM budget,
// behind a router that sends a request to a replica by a hash of its
// session (what deploy/haproxy.cfg does with x-session-id) or at random,
// with one disk tier all replicas share (--cache-disk-shared, one joint cap
// of N per-replica budgets) or a private disk tier each. The gain from
// affinity and from sharing is then the difference between rows.
//
// Not modelled: queueing (as in Replay), replicas failing, and the time a
// shared directory takes to show another replica's write (rescan_ms).
//
// Thread-safety: not thread-safe, like every Policy.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/counted_payload.h"
#include "cache/disk_tier.h"
#include "sim/policy.h"

namespace lineage::sim {

enum class Routing { kSessionHash, kRandom };

struct ReplicaOptions {
  int64_t replicas = 1;
  Routing routing = Routing::kSessionHash;
  bool shared_disk = true;
  uint64_t seed = 1;  // random routing
};

// A DiskTier seen by one replica of several sharing `base`: the replica's own
// entry ids (small numbers from its LineageCache) are tagged with the replica
// so they never collide; ids handed out by Lookup are already tagged and pass
// through unchanged.
class ReplicaDiskView final : public cache::DiskTier {
 public:
  ReplicaDiskView(cache::DiskTier* base, int64_t replica) : base_(base), tag_(static_cast<uint64_t>(replica + 1) << 48) {}
  Status Put(const cache::DiskRecord& record) override;
  std::optional<cache::DiskPoint> Lookup(cache::TokenSpan prompt, int64_t longer_than, bool recurrent) override {
    return base_->Lookup(prompt, longer_than, recurrent);
  }
  Result<cache::DiskLoad> Load(cache::EntryId entry, int64_t length) override { return base_->Load(Global(entry), length); }
  void Erase(cache::EntryId entry) override { base_->Erase(Global(entry)); }
  bool Contains(cache::EntryId entry) override { return base_->Contains(Global(entry)); }
  cache::DiskStats Stats() override { return base_->Stats(); }

 private:
  cache::EntryId Global(cache::EntryId id) const { return id >= (cache::EntryId{1} << 48) ? id : (id | tag_); }
  cache::DiskTier* base_;
  uint64_t tag_;
};

class ReplicaSetPolicy final : public Policy {
 public:
  ReplicaSetPolicy(const ModelShape& shape, const PolicyOptions& per_replica, const ReplicaOptions& options);
  ~ReplicaSetPolicy() override;

  std::string name() const override { return name_; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;
  // RAM summed over replicas; disk counted once when shared.
  PolicyCounters counters() const override;
  Status status() const override;
  bool has_disk_tier() const override { return !replicas_.empty() && replicas_.front()->has_disk_tier(); }

 private:
  std::string name_;
  ReplicaOptions options_;
  std::unique_ptr<cache::DiskTier> shared_;         // shared_disk only
  cache::PageAllocator pages_;                      // one numbering for every replica
  std::vector<std::unique_ptr<ReplicaDiskView>> views_;
  std::vector<std::unique_ptr<Policy>> replicas_;
  std::unordered_map<int64_t, size_t> routed_;      // request index -> replica
  std::mt19937_64 rng_;
};

}  // namespace lineage::sim
