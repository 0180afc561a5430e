// A fake engine around LineageCache for the cache tests: runs a request end to
// end (lookup, check the restore, admit, prefill with captures, commit) with
// counted payloads, and checks the cache's invariants after every step.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cache/counted_payload.h"
#include "cache/lineage_cache.h"
#include "cache/memory_disk_tier.h"

namespace lineage::cache::testing {

// Distinct token runs: every call returns tokens no earlier call returned, so
// two segments share a prefix only when a test builds them to.
class TokenSource {
 public:
  explicit TokenSource(TokenId first = 1) : next_(first) {}
  Tokens Fresh(int64_t n) {
    Tokens t(static_cast<size_t>(n));
    for (auto& x : t) x = next_++;
    return t;
  }

 private:
  TokenId next_ = 1;
};

inline Tokens Cat(std::initializer_list<Tokens> parts) {
  Tokens out;
  for (const Tokens& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline int64_t Len(const Tokens& t) { return static_cast<int64_t>(t.size()); }

// Options with the event-driven capture points alone: tests of turns, guards
// and divergences over hint-less prompts leave the structural points of
// hint-less traffic (no_hints_test.cpp) out of their expected point lists.
inline CacheOptions EventPointsOnly(CacheOptions o = {}) {
  o.structural_block_tokens = 0;
  return o;
}

struct Outcome {
  PointRef restore;
  std::vector<PlannedCapture> captures;
  LookupExplanation lookup;
  CommitExplanation commit;
  EntryId entry = kNoEntry;
  std::shared_ptr<CountedSequence> seq;  // the live sequence after prefill
};

class Harness {
 public:
  explicit Harness(CacheOptions options = {}, PayloadShape shape = {}, int64_t disk_bytes = -1)
      : shape_(shape) {
    options.recurrent = shape.recurrent();
    if (disk_bytes >= 0) disk_ = std::make_unique<MemoryDiskTier>(disk_bytes, &pages_);
    cache_ = std::make_unique<LineageCache>(options, disk_.get());
  }

  LineageCache& cache() { return *cache_; }
  MemoryDiskTier* disk() { return disk_.get(); }
  const PayloadShape& shape() const { return shape_; }
  PageAllocator& pages() { return pages_; }

  // Lookup and admission only; the caller commits later (concurrency tests).
  struct Open {
    LookupResult lookup;
    std::shared_ptr<CountedSequence> seq;
    Tokens prompt;
    LookupHints hints;
  };
  Open Start(const Tokens& prompt, LookupHints hints = {}) {
    Open o;
    o.prompt = prompt;
    o.hints = hints;
    auto lr = cache_->Lookup(prompt, hints);
    EXPECT_TRUE(lr.ok()) << lr.status().ToString();
    o.lookup = std::move(lr.value());
    const Status verified = VerifyRestore(prompt, o.lookup.restore, shape_.recurrent());
    EXPECT_TRUE(verified.ok()) << verified.ToString() << " | " << o.lookup.explanation.ToString();
    o.seq = std::make_shared<CountedSequence>(&pages_, shape_);
    o.seq->Admit(prompt, o.lookup.restore);
    return o;
  }

  Outcome Finish(Open o) {
    Outcome out;
    out.restore = o.lookup.restore.ref();
    out.captures = o.lookup.captures;
    out.lookup = o.lookup.explanation;
    std::vector<CapturedState> captured = o.seq->Prefill(o.prompt, o.lookup.captures);
    CommitRequest req;
    req.prompt = o.prompt;
    req.kv = o.seq->Kv();
    req.state = o.seq->State();
    req.captured = std::move(captured);
    req.lease = std::move(o.lookup.lease);
    // As RequestDriver does.
    req.absorb_tails = Hintless(o.hints);
    const RestorePoint& from = o.lookup.restore;
    if (!from.anchor) req.restored = {from.length, from.kind, from.state};
    auto cr = cache_->Commit(std::move(req));
    EXPECT_TRUE(cr.ok()) << cr.status().ToString();
    if (cr.ok()) {
      out.entry = cr->entry;
      out.commit = cr->explanation;
    }
    out.seq = o.seq;
    Check();
    return out;
  }

  Outcome Run(const Tokens& prompt, LookupHints hints = {}) { return Finish(Start(prompt, hints)); }

  // Decodes `reply` on the outcome's sequence and extends its entry.
  Status Extend(Outcome& o, const Tokens& reply) {
    o.seq->Append(reply);
    auto r = cache_->ExtendAfterGeneration(o.entry, o.seq->tokens(), o.seq->Kv(), o.seq->State());
    Check();
    return r.ok() ? Status::Ok() : r.status();
  }

  void Check() {
    const Status st = cache_->CheckInvariants();
    EXPECT_TRUE(st.ok()) << st.ToString();
  }

  const LineageCache::EntryInfo* Info(EntryId id) {
    entries_ = cache_->Entries();
    for (const auto& e : entries_) {
      if (e.id == id) return &e;
    }
    return nullptr;
  }

 private:
  PayloadShape shape_;
  PageAllocator pages_;
  std::unique_ptr<MemoryDiskTier> disk_;
  std::unique_ptr<LineageCache> cache_;
  std::vector<LineageCache::EntryInfo> entries_;
};

inline std::vector<std::pair<int64_t, PointKind>> Points(const LineageCache::EntryInfo* e) {
  std::vector<std::pair<int64_t, PointKind>> out;
  if (e) {
    for (const Checkpoint& c : e->checkpoints) out.emplace_back(c.n, c.kind);
  }
  return out;
}

}  // namespace lineage::cache::testing
