// The `lineage` and `exact` policies: the real src/cache LineageCache (in
// lineage mode, or behind its off switch) driven with byte-count payloads
// (cache/counted_payload.h) and the in-memory byte-counting disk tier. No
// policy logic lives here: replay events drive the same cache::RequestDriver
// the server's scheduler drives (lookup, captures, commit, extension), and
// every restore is checked token by token against the prompt.
#pragma once

#include <memory>
#include <unordered_map>

#include "cache/counted_payload.h"
#include "cache/lineage_cache.h"
#include "cache/memory_disk_tier.h"
#include "cache/request_driver.h"
#include "sim/policy.h"

namespace lineage::sim {

class LineagePolicy final : public Policy {
 public:
  // `exact` selects the off switch (CacheMode::kExact).
  // `name` overrides the reported name (variants such as a RAM-only run).
  // `disk`: a disk tier the caller owns and keeps alive (replicas sharing
  // one, sim/replicas.h); null: the policy's own, of options.disk_budget_bytes.
  // `pages`: the page numbering the caller owns when several policies share
  // `disk` (a page id must name one page across all of them); null: its own.
  LineagePolicy(const ModelShape& shape, const PolicyOptions& options, bool exact,
                const cache::CacheOptions& base = {}, std::string name = "", cache::DiskTier* disk = nullptr,
                cache::PageAllocator* pages = nullptr);
  std::string name() const override { return name_; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;
  PolicyCounters counters() const override;
  bool has_disk_tier() const override { return disk_ != nullptr; }
  Status status() const override { return status_; }

 private:
  struct InFlight {
    cache::RequestDriver driver;
    std::unique_ptr<cache::CountedSequence> seq;
  };
  void Fail(const Status& st);
  // Tells the cache how far every running prefill has got on the machine.
  void UpdateProgress(const Progress& progress);
  // In-flight sharing: the capture `waiter` waits for is taken from its
  // owner's (already computed) sequence; returns the owner's request index,
  // which the machine makes it wait for, or -1.
  int64_t ShareFromOwner(cache::RequestDriver& waiter);

  ModelShape shape_;
  bool exact_;
  std::string name_;
  cache::PayloadShape payload_;
  cache::PageAllocator own_pages_;
  cache::PageAllocator* pages_;
  std::unique_ptr<cache::MemoryDiskTier> own_disk_;
  cache::DiskTier* disk_ = nullptr;
  std::unique_ptr<cache::LineageCache> cache_;
  std::unordered_map<int64_t, InFlight> in_flight_;
  std::unordered_map<uint64_t, int64_t> prefill_owner_;  // cache prefill id -> request index
  Status status_;
};

}  // namespace lineage::sim
