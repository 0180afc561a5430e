// Running a piece of a disk test, or the lineage binary, in a child process
// with a time limit: a test of "never hangs" must itself end when the code
// under test hangs, and the child's peak memory (wait4) shows what it read.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace lineage::cache::disk::testing {

struct ChildRun {
  bool finished = false;    // false: killed at the time limit
  int exit_code = -1;       // -1 unless it exited
  int64_t elapsed_ms = 0;
  int64_t max_rss_kib = 0;  // the child's peak resident set
  std::string output;       // its stdout and stderr
};

// Forks; the child runs `body` (stdout and stderr captured) and exits with
// its return value; it gets SIGTERM after `sigterm_after_ms` (if >= 0) and
// SIGKILL after `timeout_ms`.
inline ChildRun RunInChild(const std::function<int()>& body, int64_t timeout_ms, int64_t sigterm_after_ms = -1) {
  ChildRun r;
  int fds[2];
  if (::pipe(fds) != 0) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    const int code = body();
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }
  ::close(fds[1]);
  int status = 0;
  struct rusage ru {};
  bool reaped = false, eof = false, termed = false;
  while (!reaped || !eof) {
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    if (!reaped && !termed && sigterm_after_ms >= 0 && elapsed > std::chrono::milliseconds(sigterm_after_ms)) {
      ::kill(pid, SIGTERM);
      termed = true;
    }
    if (!reaped && elapsed > std::chrono::milliseconds(timeout_ms)) {
      ::kill(pid, SIGKILL);
      reaped = ::wait4(pid, &status, 0, &ru) == pid;
      break;
    }
    struct pollfd p {fds[0], POLLIN, 0};
    if (!eof && ::poll(&p, 1, 10) > 0) {
      char buf[4096];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) r.output.append(buf, static_cast<size_t>(n));
      if (n == 0) eof = true;
    } else if (eof) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!reaped && ::wait4(pid, &status, WNOHANG, &ru) == pid) {
      reaped = true;
      r.finished = true;
    }
  }
  ::close(fds[0]);
  r.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  r.max_rss_kib = ru.ru_maxrss;
  if (r.finished && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

// The lineage binary with `args` as its argument vector (no shell).
inline ChildRun RunLineage(std::vector<std::string> args, int64_t timeout_ms, int64_t sigterm_after_ms = -1) {
  return RunInChild(
      [&] {
        args.insert(args.begin(), LINEAGE_BINARY);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        return 127;
      },
      timeout_ms, sigterm_after_ms);
}

// Peak resident set of this process so far, KiB.
inline int64_t MaxRssKib() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace lineage::cache::disk::testing
