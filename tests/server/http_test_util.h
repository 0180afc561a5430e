// Helpers for tests that talk to HttpServer over real HTTP.
#pragma once

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lineage::server::testing {

// A raw loopback connection, for clients httplib cannot imitate (slow ones,
// malformed framing, half-closes).
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    timeval tv{5, 0};  // no read below waits longer
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawConnection() { ::close(fd_); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }
  bool Send(const std::string& s) { return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
  // Ends the sending side only; replies can still be read.
  void HalfClose() { ::shutdown(fd_, SHUT_WR); }
  // What the server sent until it closed (or 5 s passed).
  std::string ReadAll() {
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

struct SseMessage {
  std::string event;  // "" when the message had no event line
  std::string data;
};

// Splits a text/event-stream body into messages; comment lines are skipped.
inline std::vector<SseMessage> ParseSse(const std::string& body) {
  std::vector<SseMessage> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string block = body.substr(pos, end - pos);
    pos = end + 2;
    SseMessage m;
    bool any = false;
    size_t lpos = 0;
    while (lpos <= block.size()) {
      size_t lend = block.find('\n', lpos);
      if (lend == std::string::npos) lend = block.size();
      std::string line = block.substr(lpos, lend - lpos);
      lpos = lend + 1;
      if (line.rfind("event: ", 0) == 0) m.event = line.substr(7), any = true;
      else if (line.rfind("data: ", 0) == 0) m.data += line.substr(6), any = true;
    }
    if (any) out.push_back(m);
  }
  return out;
}

}  // namespace lineage::server::testing
