// WaitingRoom: a parked socket comes back when it is readable, when its
// deadline passes, when the room is full and it waited longest, or when the
// room stops; each exactly once.
#include "server/http/waiting_room.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace lineage::server {
namespace {

using namespace std::chrono_literals;
using Clock = WaitingRoom::Clock;

struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int parked() const { return fds[0]; }
  int peer() const { return fds[1]; }
  int fds[2] = {-1, -1};
};

// What each parked socket came back with: -1 not yet, 0 not readable, 1 readable.
struct Outcomes {
  explicit Outcomes(size_t n) : got(n) {
    for (auto& g : got) g = -1;
  }
  WaitingRoom::Ready For(size_t i) {
    return [this, i](bool readable) {
      int before = got[i].exchange(readable ? 1 : 0);
      if (before != -1) twice = true;
    };
  }
  bool WaitAll(std::chrono::milliseconds limit) {
    auto end = Clock::now() + limit;
    for (;;) {
      bool all = true;
      for (auto& g : got) all = all && g != -1;
      if (all) return true;
      if (Clock::now() > end) return false;
      std::this_thread::sleep_for(2ms);
    }
  }
  std::vector<std::atomic<int>> got;
  std::atomic<bool> twice{false};
};

TEST(WaitingRoom, AReadableSocketComesBackReadableAndAQuietOneAtItsDeadline) {
  SocketPair talks, quiet;
  Outcomes out(2);
  WaitingRoom room(16);  // last: it returns its guests when destroyed
  Clock::time_point t0 = Clock::now();
  room.Park(talks.parked(), t0 + 10s, out.For(0));
  room.Park(quiet.parked(), t0 + 150ms, out.For(1));
  EXPECT_EQ(room.parked(), 2u);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(out.got[0], -1) << "nothing sent yet";
  ASSERT_EQ(::write(talks.peer(), "x", 1), 1);
  ASSERT_TRUE(out.WaitAll(3s));
  EXPECT_EQ(out.got[0], 1);
  EXPECT_EQ(out.got[1], 0);
  EXPECT_GE(Clock::now() - t0, 150ms);
  EXPECT_LT(Clock::now() - t0, 2s) << "the deadline is kept, not the 10 s of the other";
  EXPECT_EQ(room.parked(), 0u);
  EXPECT_FALSE(out.twice);
}

TEST(WaitingRoom, APeerThatClosesComesBackReadable) {
  SocketPair pair;
  Outcomes out(1);
  WaitingRoom room(4);
  room.Park(pair.parked(), Clock::now() + 10s, out.For(0));
  ::shutdown(pair.peer(), SHUT_WR);
  ASSERT_TRUE(out.WaitAll(3s));
  EXPECT_EQ(out.got[0], 1) << "the server reads the end of stream and closes";
}

TEST(WaitingRoom, AFullRoomTurnsAwayTheLongestWaiting) {
  std::vector<std::unique_ptr<SocketPair>> pairs;
  Outcomes out(5);
  WaitingRoom room(3);
  for (size_t i = 0; i < 5; ++i) {
    pairs.push_back(std::make_unique<SocketPair>());
    room.Park(pairs[i]->parked(), Clock::now() + 10s, out.For(i));
  }
  EXPECT_EQ(room.parked(), 3u);
  EXPECT_EQ(out.got[0], 0);
  EXPECT_EQ(out.got[1], 0);
  EXPECT_EQ(out.got[2], -1);
  // The newest still come back when they speak.
  ASSERT_EQ(::write(pairs[4]->peer(), "x", 1), 1);
  auto end = Clock::now() + 3s;
  while (out.got[4] == -1 && Clock::now() < end) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(out.got[4], 1);
}

TEST(WaitingRoom, StopReturnsEveryoneAndLaterParksAtOnce) {
  std::vector<std::unique_ptr<SocketPair>> pairs;
  Outcomes out(4);
  {
    WaitingRoom room(8);
    for (size_t i = 0; i < 3; ++i) {
      pairs.push_back(std::make_unique<SocketPair>());
      room.Park(pairs[i]->parked(), Clock::now() + 10s, out.For(i));
    }
    room.Stop();
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out.got[i], 0);
    pairs.push_back(std::make_unique<SocketPair>());
    ASSERT_EQ(::write(pairs[3]->peer(), "x", 1), 1);
    room.Park(pairs[3]->parked(), Clock::now() + 10s, out.For(3));
    EXPECT_EQ(out.got[3], 0) << "after Stop nothing waits";
    room.Stop();  // twice is harmless
  }
  EXPECT_FALSE(out.twice);
}

// Many threads park and the peers speak at random: each socket comes back once.
TEST(WaitingRoom, ConcurrentParksComeBackExactlyOnce) {
  constexpr size_t kSockets = 200;
  std::vector<std::unique_ptr<SocketPair>> pairs;
  for (size_t i = 0; i < kSockets; ++i) pairs.push_back(std::make_unique<SocketPair>());
  Outcomes out(kSockets);
  WaitingRoom room(kSockets);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < kSockets; i += 4) {
        room.Park(pairs[i]->parked(), Clock::now() + (i % 2 ? 10s : 50ms), out.For(i));
        if (i % 2) ASSERT_EQ(::write(pairs[i]->peer(), "x", 1), 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(out.WaitAll(5s));
  for (size_t i = 0; i < kSockets; ++i) EXPECT_EQ(out.got[i], i % 2 ? 1 : 0) << i;
  EXPECT_FALSE(out.twice);
}

}  // namespace
}  // namespace lineage::server
