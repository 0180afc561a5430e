// KvEventPublisher: tells cluster routers (llm-d's KV-cache-aware scorer,
// NVIDIA Dynamo's KV router) which prefixes this replica can restore, in
// vLLM's KV-event wire format over a ZMQ PUB socket (docs/kv-events.md):
// multipart messages [topic, u64 big-endian sequence number, msgpack batch],
// a batch being [ts, [event, ...]] with BlockStored / BlockRemoved /
// AllBlocksCleared events in msgspec's array-like tagged form.
//
// What it publishes is a diff: each Publish() takes the replica's current
// restorable prefixes (the `view` callback: RAM entries and checkpoints, disk
// entries and their states), cuts them into blocks (kv_event_blocks.h), and
// sends BlockStored for every block not yet published (parents first) and
// BlockRemoved for every published block no restorable prefix holds any
// more. So a subscriber that applies every batch holds exactly the blocks of
// the restorable prefixes as of the last batch, and never a block of a prefix
// the replica cannot restore (a KV page without a recurrent state at or past
// its end is never named). The first batch is AllBlocksCleared: a router
// drops what an earlier run of this replica published.
//
// Start() runs Publish() on a thread every poll_ms when `changed` says the
// cache moved (a cheap version number), so no cache code waits on it.
//
// Thread-safety: Publish() and the thread serialize on one mutex; the view
// callback must be safe to call from the publisher's thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "server/kv_events/kv_event_blocks.h"

namespace lineage::server {

struct KvEventOptions {
  std::string endpoint;        // e.g. tcp://127.0.0.1:5557 (bound)
  int64_t block_tokens = 64;   // the router's block size must match
  std::string topic;           // the first frame of every message
  std::string medium = "CPU";  // BlockStored / BlockRemoved medium field
  int64_t poll_ms = 50;
};

struct KvEventCounters {
  int64_t batches = 0;
  int64_t stored = 0;
  int64_t removed = 0;
  int64_t published_blocks = 0;  // currently
};

class KvEventPublisher {
 public:
  using View = std::function<std::vector<RestorablePrefix>()>;
  using Version = std::function<uint64_t()>;

  // Binds the socket and sends the AllBlocksCleared batch (sequence 0).
  static Result<std::unique_ptr<KvEventPublisher>> Create(const KvEventOptions& options, View view);
  ~KvEventPublisher();

  // Diffs the view against what was published and sends one batch (also an
  // empty one when `always`); returns the batch's sequence number, or -1
  // when nothing was sent.
  Result<int64_t> Publish(bool always = false);
  // Publishes every poll_ms while `changed()` differs from its last value.
  void Start(Version changed);
  KvEventCounters Counters();

 private:
  struct Impl;
  explicit KvEventPublisher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lineage::server
