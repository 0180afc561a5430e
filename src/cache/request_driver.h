// RequestDriver: the cache side of one request, from lookup to the
// end-of-generation extension (DESIGN.md §2, §3), written once for the
// server's scheduler and the simulator's replay (the role vLLM v1's KV cache
// manager plays for its scheduler).
//
// It owns the lookup result (restore point and planned captures), the lease
// on the source entry, the recurrent states captured during prefill and the
// id of the entry the request committed. The engine side (admission,
// prefill, decode) stays with the caller:
//
//   auto d = RequestDriver::Begin(cache, prompt, hints);   // lookup + checks
//   admit from d->restore(); prefill prompt[r, m) stopping at every length
//   of d->CapturesIn(from, to), handing each state to d->Captured(n, state);
//   d->Commit(kv [0,m), state at m);                        // at prompt end
//   ... decode ...
//   d->Extend(prompt + reply, kv, state);                  // after generation
//
// In-flight sharing: Begin registers the prefill with the cache. When
// another registered prefill is computing a long prefix of this prompt,
// waiting() is true: the caller polls TakeShared() before admitting (the
// restore point becomes that prefill's capture once it has come; the
// lookup's own point stays if the other prefill ended first). A prefilling
// driver also captures the points others wait for (CapturesIn lists them)
// and hands them out with Publish(kv) after each chunk.
//
// A request cancelled during prefill calls CommitPartial with what it has:
// the prefilled prefix becomes an entry, so a client that retries after a
// timeout lands on it. Dropping the driver releases its lease.
//
// Invariants: a restore point Begin returns has r < m, KV of exactly r rows
// and (recurrent layouts, r > 0) a state; a capture is kept only at a
// planned length; Commit / CommitPartial run at most once; Extend only after
// a commit kept an entry.
//
// Ownership: borrows the cache, which must outlive it. Move-only.
// Thread-safety: one driver belongs to one thread; the cache is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "cache/lineage_cache.h"
#include "core/status.h"

namespace lineage::cache {

class RequestDriver {
 public:
  RequestDriver() = default;
  RequestDriver(RequestDriver&&) noexcept = default;
  RequestDriver& operator=(RequestDriver&&) noexcept = default;
  RequestDriver(const RequestDriver&) = delete;
  RequestDriver& operator=(const RequestDriver&) = delete;

  // Looks `prompt` up and checks the restore point's shape (length below m,
  // KV rows, a state where the layout needs one). Internal if the cache
  // returned a malformed point: the request must not be admitted from it.
  static Result<RequestDriver> Begin(LineageCache& cache, Tokens prompt, const LookupHints& hints = {});

  const LookupResult& lookup() const { return lookup_; }
  const RestorePoint& restore() const { return lookup_.restore; }
  // Valid until Commit (which hands the tokens to the cache).
  const Tokens& prompt() const { return prompt_; }
  int64_t prompt_tokens() const { return prompt_tokens_; }

  // Capture lengths n with from < n <= to, ascending: the planned ones and
  // those other requests wait for.
  std::vector<int64_t> CapturesIn(int64_t from_tokens, int64_t to_tokens) const;
  // The recurrent state after exactly n prompt tokens. False (and ignored)
  // when n was neither planned nor waited for.
  bool Captured(int64_t n, RecurrentPtr state);

  // Waiting for another prefill's capture (in-flight sharing).
  bool waiting() const { return registration_.wait.has_value(); }
  // The capture this request waits for: {owner prefill, n}.
  const std::optional<SharedWait>& wait() const { return registration_.wait; }
  // kReady: restore() is now the other prefill's point (the lookup's lease
  // is released); kGone: the wait ended without it and restore() stays the
  // lookup's; either way waiting() turns false. kPending: ask again later.
  SharedState TakeShared();
  // Stops waiting; restore() stays the lookup's.
  void StopWaiting();
  // The prefill reached n tokens (waiters decide by it whether to wait).
  void Progress(int64_t n);
  // Hands out the captured points others wait for; `kv_so_far` (called only
  // when there is something to hand out) gives the sequence's KV so far,
  // which holds the rows up to each of them.
  void Publish(const std::function<KvPtr()>& kv_so_far);
  // This prefill's id in the cache's in-flight table (0: not registered).
  uint64_t prefill_id() const { return registration_.id; }
  int64_t num_captured() const { return static_cast<int64_t>(captured_.size()); }

  // The sequence at prompt end becomes an entry. A failed commit costs reuse,
  // never the request: the caller reports the error and carries on.
  // REQUIRES: not committed yet; kv holds m rows.
  Result<CommitResult> Commit(KvPtr kv, RecurrentPtr state);
  // A request that stops after n prefilled tokens (cancelled, or failed
  // after some chunks). Commits prompt[0, n) when n is past the restore
  // point; otherwise only releases the lease (entry() stays kNoEntry).
  Result<CommitResult> CommitPartial(int64_t n, KvPtr kv, RecurrentPtr state);

  // End of generation: the committed entry grows to `tokens` (the prompt
  // followed by the reply tokens the sequence holds). Ok when there is
  // nothing to do (no entry, no reply) or the entry has left RAM meanwhile;
  // any other error is the caller's to report.
  Status Extend(TokenSpan tokens, KvPtr kv, RecurrentPtr state);

  EntryId entry() const { return entry_; }
  bool committed() const { return committed_; }
  // Drops the lease (a request that ends without committing) and ends the
  // in-flight registration and any wait.
  void Release();

 private:
  // Ends the in-flight registration and abandons the wait when dropped.
  struct Registration {
    Registration() = default;
    Registration(Registration&& o) noexcept
        : cache(std::exchange(o.cache, nullptr)), id(std::exchange(o.id, 0)), wait(std::exchange(o.wait, {})) {}
    Registration& operator=(Registration&& o) noexcept {
      if (this != &o) {
        End();
        cache = std::exchange(o.cache, nullptr);
        id = std::exchange(o.id, 0);
        wait = std::exchange(o.wait, {});
      }
      return *this;
    }
    ~Registration() { End(); }
    void End();
    LineageCache* cache = nullptr;
    uint64_t id = 0;
    std::optional<SharedWait> wait;  // the capture this request waits for
  };

  LineageCache* cache_ = nullptr;
  Tokens prompt_;
  int64_t prompt_tokens_ = 0;
  LookupResult lookup_;
  std::vector<CapturedState> captured_;
  EntryId entry_ = kNoEntry;
  bool committed_ = false;
  bool hintless_ = false;  // the request came without hints (CommitRequest::absorb_tails)
  Registration registration_;
};

}  // namespace lineage::cache
