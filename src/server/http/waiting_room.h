// WaitingRoom: connections with nothing to read wait here, not on a worker.
//
// An HTTP worker serving a connection that has no request yet (just
// accepted, or idle between keep-alive requests) would block in poll while
// requests queued behind it wait: a burst of 500 idle connections delayed
// /health by 24 s on a 76-worker pool. Instead the connection is parked: one
// thread watches every parked socket with epoll and, when one becomes
// readable (or closes), hands it back through `ready(true)`; when its
// deadline passes, through `ready(false)`. At most `capacity` connections
// wait; parking one more gives the one that has waited longest
// `ready(false)` (idle keep-alive connections are cheap to reopen, and a
// flood of them must not exhaust the process's descriptors).
// Thread-safety: Park and Stop from any thread. `ready` runs on the room's
// thread (or the caller's, after Stop) exactly once per Park, outside the
// room's lock, and must not block.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace lineage::server {

class WaitingRoom {
 public:
  using Clock = std::chrono::steady_clock;
  using Ready = std::function<void(bool readable)>;

  explicit WaitingRoom(size_t capacity);
  ~WaitingRoom();  // Stop()
  WaitingRoom(const WaitingRoom&) = delete;
  WaitingRoom& operator=(const WaitingRoom&) = delete;

  // Watches `fd` until it is readable or `deadline`. After Stop, calls
  // ready(false) at once.
  void Park(int fd, Clock::time_point deadline, Ready ready);
  // Gives every parked connection ready(false) and ends the thread.
  void Stop();

  size_t parked() const;
  size_t capacity() const { return capacity_; }

 private:
  struct Guest {
    Clock::time_point deadline;
    uint64_t order;  // arrival, for the longest-waiting
    Ready ready;
  };

  void Loop();
  // Under mu_: takes `fd` out of the room; its Ready is moved to `out`.
  void Remove(int fd, std::vector<Ready>* out);
  void Wake();

  const size_t capacity_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  mutable std::mutex mu_;
  bool stopped_ = false;
  uint64_t next_order_ = 0;
  std::map<int, Guest> guests_;
  std::set<std::pair<Clock::time_point, int>> by_deadline_;
  std::set<std::pair<uint64_t, int>> by_arrival_;
  std::thread thread_;
};

}  // namespace lineage::server
