// The `lineage` and `exact` policies: the real src/cache LineageCache (in
// lineage mode, or behind its off switch) driven with byte-count payloads
// (cache/counted_payload.h) and the in-memory byte-counting disk tier. No
// policy logic lives here: this file only turns replay events into the
// engine's calls (Lookup, admit + prefill with captures, Commit,
// ExtendAfterGeneration) and checks every restore against the prompt.
#pragma once

#include <memory>
#include <unordered_map>

#include "cache/counted_payload.h"
#include "cache/lineage_cache.h"
#include "cache/memory_disk_tier.h"
#include "sim/policy.h"

namespace lineage::sim {

class LineagePolicy final : public Policy {
 public:
  // `exact` selects the off switch (CacheMode::kExact).
  // `name` overrides the reported name (variants such as a RAM-only run).
  // `disk`: a disk tier the caller owns and keeps alive (replicas sharing
  // one, sim/replicas.h); null: the policy's own, of options.disk_budget_bytes.
  LineagePolicy(const ModelShape& shape, const PolicyOptions& options, bool exact,
                const cache::CacheOptions& base = {}, std::string name = "", cache::DiskTier* disk = nullptr);
  std::string name() const override { return name_; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;
  PolicyCounters counters() const override;
  Status status() const override { return status_; }

  // Slack the server subtracts from the anchor length for BPE merges (DESIGN.md §2).
  static constexpr int64_t kAnchorSlackTokens = 2;

 private:
  struct InFlight {
    std::shared_ptr<cache::Tokens> tokens;
    std::unique_ptr<cache::CountedSequence> seq;
    std::vector<cache::CapturedState> captured;
    cache::Lease lease;
    cache::EntryId entry = cache::kNoEntry;
  };
  void Fail(const Status& st);

  ModelShape shape_;
  bool exact_;
  std::string name_;
  cache::PayloadShape payload_;
  cache::PageAllocator pages_;
  std::unique_ptr<cache::MemoryDiskTier> own_disk_;
  cache::DiskTier* disk_ = nullptr;
  std::unique_ptr<cache::LineageCache> cache_;
  std::unordered_map<int64_t, InFlight> in_flight_;
  Status status_;
};

}  // namespace lineage::sim
