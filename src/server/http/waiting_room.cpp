#include "server/http/waiting_room.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace lineage::server {

WaitingRoom::WaitingRoom(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    // Without epoll nothing can wait here: every Park is answered at once.
    stopped_ = true;
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { Loop(); });
}

WaitingRoom::~WaitingRoom() {
  Stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

size_t WaitingRoom::parked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return guests_.size();
}

void WaitingRoom::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void WaitingRoom::Remove(int fd, std::vector<Ready>* out) {
  auto it = guests_.find(fd);
  if (it == guests_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  by_deadline_.erase({it->second.deadline, fd});
  by_arrival_.erase({it->second.order, fd});
  out->push_back(std::move(it->second.ready));
  guests_.erase(it);
}

void WaitingRoom::Park(int fd, Clock::time_point deadline, Ready ready) {
  std::vector<Ready> turned_away;
  bool parked = false, nearest = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_) {
      if (guests_.size() >= capacity_) Remove(by_arrival_.begin()->second, &turned_away);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0) {
        uint64_t order = next_order_++;
        guests_.emplace(fd, Guest{deadline, order, std::move(ready)});
        by_deadline_.insert({deadline, fd});
        by_arrival_.insert({order, fd});
        parked = true;
        nearest = by_deadline_.begin()->second == fd;
      }
    }
  }
  for (Ready& r : turned_away) r(false);
  if (!parked) {
    ready(false);
    return;
  }
  if (nearest) Wake();  // the loop sleeps until the nearest deadline it knew
}

void WaitingRoom::Loop() {
  std::array<epoll_event, 64> events;
  for (;;) {
    int timeout_ms = 1000;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      if (!by_deadline_.empty()) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(by_deadline_.begin()->first - Clock::now()).count();
        timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 1000));
      }
    }
    int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
    if (n < 0 && errno != EINTR) return;
    std::vector<Ready> readable, expired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wake_fd_) {
          uint64_t count;
          [[maybe_unused]] ssize_t r = ::read(wake_fd_, &count, sizeof count);
          continue;
        }
        Remove(fd, &readable);
      }
      Clock::time_point now = Clock::now();
      while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) Remove(by_deadline_.begin()->second, &expired);
    }
    for (Ready& r : readable) r(true);
    for (Ready& r : expired) r(false);
  }
}

void WaitingRoom::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ && !thread_.joinable()) return;
    stopped_ = true;
  }
  if (thread_.joinable()) {
    Wake();
    thread_.join();
  }
  std::vector<Ready> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!guests_.empty()) Remove(guests_.begin()->first, &left);
  }
  for (Ready& r : left) r(false);
}

}  // namespace lineage::server
