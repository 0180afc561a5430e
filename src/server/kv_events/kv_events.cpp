#include "server/kv_events/kv_events.h"

#include <msgpack.hpp>
#include <zmq.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace lineage::server {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// [ts, [events...]] with events in msgspec's array_like tagged form:
//   ["BlockStored", [hash], parent | nil, [token ids], block_size, lora_id nil, medium]
//   ["BlockRemoved", [hash, ...], medium]
//   ["AllBlocksCleared"]
std::string EncodeBatch(const std::vector<std::pair<uint64_t, const KvBlock*>>& stored,
                        const std::vector<uint64_t>& removed, bool cleared, int64_t block_tokens,
                        const std::string& medium) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(2);
  pk.pack_double(NowSeconds());
  pk.pack_array(static_cast<uint32_t>(stored.size() + (removed.empty() ? 0 : 1) + (cleared ? 1 : 0)));
  if (cleared) {
    pk.pack_array(1);
    pk.pack(std::string("AllBlocksCleared"));
  }
  if (!removed.empty()) {
    pk.pack_array(3);
    pk.pack(std::string("BlockRemoved"));
    pk.pack(removed);
    pk.pack(medium);
  }
  for (const auto& [hash, block] : stored) {
    pk.pack_array(7);
    pk.pack(std::string("BlockStored"));
    pk.pack_array(1);
    pk.pack_uint64(hash);
    if (block->parent) pk.pack_uint64(*block->parent);
    else pk.pack_nil();
    pk.pack(block->tokens);
    pk.pack_int64(block_tokens);
    pk.pack_nil();
    pk.pack(medium);
  }
  return std::string(buf.data(), buf.size());
}

}  // namespace

struct KvEventPublisher::Impl {
  KvEventOptions options;
  View view;
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::pub};
  std::mutex mu;
  KvBlockSet published;
  int64_t next_seq = 0;
  KvEventCounters counters;

  std::mutex thread_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  std::thread thread;

  Status Send(const std::string& payload) {
    uint8_t seq[8];
    for (int i = 0; i < 8; ++i) seq[i] = static_cast<uint8_t>(static_cast<uint64_t>(next_seq) >> (8 * (7 - i)));
    try {
      socket.send(zmq::buffer(options.topic), zmq::send_flags::sndmore);
      socket.send(zmq::buffer(seq, 8), zmq::send_flags::sndmore);
      socket.send(zmq::buffer(payload), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      return IoError(std::string("kv events: send: ") + e.what());
    }
    ++next_seq;
    ++counters.batches;
    return Status::Ok();
  }
};

KvEventPublisher::KvEventPublisher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<KvEventPublisher>> KvEventPublisher::Create(const KvEventOptions& options, View view) {
  if (options.block_tokens < 1) return InvalidArgument("--kv-events-block must be at least 1");
  if (!view) return InvalidArgument("kv events: no view of the cache");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->view = std::move(view);
  try {
    impl->socket.set(zmq::sockopt::sndhwm, 100'000);
    impl->socket.set(zmq::sockopt::linger, 1000);
    impl->socket.bind(options.endpoint);
  } catch (const zmq::error_t& e) {
    return InvalidArgument("--kv-events " + options.endpoint + ": " + e.what());
  }
  std::unique_ptr<KvEventPublisher> p(new KvEventPublisher(std::move(impl)));
  {
    std::lock_guard<std::mutex> lock(p->impl_->mu);
    LINEAGE_RETURN_IF_ERROR(p->impl_->Send(EncodeBatch({}, {}, /*cleared=*/true, options.block_tokens, options.medium)));
  }
  return p;
}

KvEventPublisher::~KvEventPublisher() {
  {
    std::lock_guard<std::mutex> lock(impl_->thread_mu);
    impl_->stop = true;
  }
  impl_->stop_cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<int64_t> KvEventPublisher::Publish(bool always) {
  Impl& s = *impl_;
  // The view is taken under the lock too, so two publishes never apply an
  // older view after a newer one. The cache never calls the publisher.
  std::lock_guard<std::mutex> lock(s.mu);
  KvBlockSet now = BlocksOf(s.view(), s.options.block_tokens);
  std::vector<std::pair<uint64_t, const KvBlock*>> stored;
  for (const auto& [h, b] : now) {
    if (!s.published.count(h)) stored.push_back({h, &b});
  }
  // Parents before children: a subscriber links each block as it arrives.
  std::sort(stored.begin(), stored.end(), [](const auto& a, const auto& b) {
    return a.second->depth != b.second->depth ? a.second->depth < b.second->depth : a.first < b.first;
  });
  std::vector<uint64_t> removed;
  for (const auto& [h, b] : s.published) {
    if (!now.count(h)) removed.push_back(h);
  }
  std::sort(removed.begin(), removed.end());
  if (stored.empty() && removed.empty() && !always) return int64_t{-1};
  const int64_t seq = s.next_seq;
  LINEAGE_RETURN_IF_ERROR(
      s.Send(EncodeBatch(stored, removed, /*cleared=*/false, s.options.block_tokens, s.options.medium)));
  s.counters.stored += static_cast<int64_t>(stored.size());
  s.counters.removed += static_cast<int64_t>(removed.size());
  s.published = std::move(now);
  s.counters.published_blocks = static_cast<int64_t>(s.published.size());
  return seq;
}

void KvEventPublisher::Start(Version changed) {
  impl_->thread = std::thread([this, changed = std::move(changed)] {
    uint64_t last = 0;
    bool first = true;
    std::unique_lock<std::mutex> lock(impl_->thread_mu);
    while (!impl_->stop) {
      lock.unlock();
      const uint64_t v = changed();
      if (first || v != last) {
        Result<int64_t> sent = Publish();
        if (!sent.ok()) std::fprintf(stderr, "kv events: %s\n", sent.status().ToString().c_str());
        last = v;
        first = false;
      }
      lock.lock();
      impl_->stop_cv.wait_for(lock, std::chrono::milliseconds(impl_->options.poll_ms), [&] { return impl_->stop; });
    }
  });
}

KvEventCounters KvEventPublisher::Counters() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->counters;
}

}  // namespace lineage::server
