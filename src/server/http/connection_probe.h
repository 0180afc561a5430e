// ConnectionProbe: tells whether the peer of one accepted TCP connection has
// gone away, for handlers that produce their whole reply before writing it
// (a non-streaming completion can prefill for minutes; a client that timed
// out should stop the work, as a streaming client does by failing a write).
//
// The HTTP library hands a handler the connection's addresses but not its
// socket, so Find() looks the socket up among the process's descriptors by
// its (local, remote) address pair, which identifies one TCP connection.
// The descriptor stays valid while the handler runs: the library closes it
// only after the handler returns.
//
// Thread-safety: PeerClosed() may be called from the handler's thread only.
#pragma once

#include <optional>
#include <string>

namespace lineage::server {

class ConnectionProbe {
 public:
  // nullopt when no socket of this process has that address pair.
  static std::optional<ConnectionProbe> Find(const std::string& local_addr, int local_port,
                                             const std::string& remote_addr, int remote_port);

  // True once the peer has closed its side or the connection failed. Bytes
  // the peer sent meanwhile (a pipelined request) are left unread.
  bool PeerClosed() const;

  int fd() const { return fd_; }

 private:
  explicit ConnectionProbe(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace lineage::server
