// Admission: the places for generations running or queued, and the ticket
// that holds one of them.
//
// Invariant: in_flight() equals the number of live tickets. A ticket gives
// its place back when it is destroyed, however its request ends (a normal
// return, an error value, an exception, a client gone mid-stream), so no
// failure path can leak a place and leave the server refusing work.
// Ownership: tickets point at their Admission, which must outlive them.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <optional>

namespace lineage::server {

class Admission {
 public:
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket() {
      if (owner_) owner_->in_flight_.fetch_sub(1);
    }

   private:
    friend class Admission;
    explicit Ticket(Admission* owner) : owner_(owner) {}
    Admission* owner_;
  };

  explicit Admission(int capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // A place, or nothing when all `capacity` places are taken.
  std::optional<Ticket> TryAdmit() {
    int n = in_flight_.load();
    do {
      if (n >= capacity_) return std::nullopt;
    } while (!in_flight_.compare_exchange_weak(n, n + 1));
    return Ticket(this);
  }

  int in_flight() const { return in_flight_.load(); }
  int capacity() const { return capacity_; }
  bool full() const { return in_flight() >= capacity_; }

 private:
  const int capacity_;
  std::atomic<int> in_flight_{0};
};

}  // namespace lineage::server
