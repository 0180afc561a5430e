#include "server/http/connection_probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lineage::server {
namespace {

// The numeric address and port of a socket address, as the HTTP library
// reports them (inet_ntop text).
bool Describe(const sockaddr_storage& a, std::string* addr, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    if (!inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text)) return false;
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    if (!inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text)) return false;
    *port = ntohs(v6.sin6_port);
  } else {
    return false;
  }
  *addr = text;
  return true;
}

bool Matches(int fd, const std::string& local_addr, int local_port, const std::string& remote_addr,
             int remote_port) {
  sockaddr_storage local{}, remote{};
  socklen_t local_len = sizeof local, remote_len = sizeof remote;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_len) != 0) return false;
  std::string la, ra;
  int lp = -1, rp = -1;
  return Describe(local, &la, &lp) && Describe(remote, &ra, &rp) && lp == local_port && rp == remote_port &&
         la == local_addr && ra == remote_addr;
}

}  // namespace

std::optional<ConnectionProbe> ConnectionProbe::Find(const std::string& local_addr, int local_port,
                                                     const std::string& remote_addr, int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return std::nullopt;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return std::nullopt;
  std::optional<ConnectionProbe> found;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (Matches(static_cast<int>(fd), local_addr, local_port, remote_addr, remote_port)) {
      found = ConnectionProbe(static_cast<int>(fd));
      break;
    }
  }
  closedir(dir);
  return found;
}

bool ConnectionProbe::PeerClosed() const {
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  int n = poll(&p, 1, 0);
  if (n <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL | POLLRDHUP)) return true;
  // Readable: either request bytes (alive) or end of stream (closed).
  char byte;
  ssize_t got = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace lineage::server
