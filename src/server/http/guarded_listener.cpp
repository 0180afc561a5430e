#include "server/http/guarded_listener.h"

#include "server/http/http_framing.h"
#include "server/http/waiting_room.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace lineage::server {
namespace {

using Clock = std::chrono::steady_clock;

thread_local bool t_overflow = false;
thread_local RequestSlot t_request;

std::string AddressOf(const sockaddr_storage& addr, socklen_t len, int* port) {
  char host[NI_MAXHOST] = "";
  char serv[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "";
  if (port) *port = std::atoi(serv);
  return host;
}

std::string PeerAddress(int fd, int* port = nullptr) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  return AddressOf(addr, len, port);
}

// Waits for `events` on fd until `deadline`; true when ready.
bool PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    // Rounded up, so that a false return means the deadline has passed.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000 * 1000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// A socket stream whose reads end at a deadline set per request phase;
// reads are buffered because httplib reads request lines a byte at a time,
// and the listener reads a request's head (and a chunked body) itself, then
// puts back what httplib is to read.
class DeadlineStream final : public httplib::Stream {
 public:
  enum class Fill { kOk, kClosed, kTimedOut };

  DeadlineStream(int fd, std::chrono::milliseconds write_timeout) : fd_(fd), write_timeout_(write_timeout) {}

  void set_read_deadline(Clock::time_point t) { deadline_ = t; }
  bool has_buffered() const { return off_ < buf_.size(); }
  std::string_view buffered() const { return std::string_view(buf_).substr(off_); }
  void Consume(size_t n) { off_ += n; }
  // Puts bytes back in front of the buffered ones.
  void Unread(std::string bytes) {
    buf_ = std::move(bytes) + buf_.substr(off_);
    off_ = 0;
  }
  // Appends what the socket has (waiting up to the deadline).
  Fill ReadMore() {
    if (!WaitReadable()) return Clock::now() >= deadline_ ? Fill::kTimedOut : Fill::kClosed;
    char tmp[4096];
    ssize_t n = Recv(tmp, sizeof tmp);
    if (n <= 0) return Fill::kClosed;
    if (off_ > 0 && off_ == buf_.size()) buf_.clear(), off_ = 0;
    buf_.append(tmp, static_cast<size_t>(n));
    return Fill::kOk;
  }

  bool is_readable() const override { return has_buffered() || WaitReadable(); }
  bool is_writable() const override { return PollUntil(fd_, POLLOUT, Clock::now() + write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (!has_buffered()) {
      if (!WaitReadable()) return -1;
      buf_.clear();
      off_ = 0;
      if (size >= 4096) return Recv(ptr, size);
      if (ReadMore() != Fill::kOk) return 0;
    }
    size_t n = std::min(size, buf_.size() - off_);
    std::memcpy(ptr, buf_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    for (;;) {
      ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || errno != EINTR) return n;
    }
  }
  bool WriteAll(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = write(s.data(), s.size());
      if (n <= 0) return false;
      s.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = PeerAddress(fd_, &port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip = AddressOf(addr, len, &port);
  }
  socket_t socket() const override { return fd_; }

 private:
  bool WaitReadable() const {
    if (PollUntil(fd_, POLLIN, deadline_)) return true;
    if (Clock::now() >= deadline_) t_request.read_timed_out = true;
    return false;
  }
  ssize_t Recv(char* p, size_t n) {
    for (;;) {
      ssize_t r = ::recv(fd_, p, n, 0);
      if (r >= 0 || errno != EINTR) return r;
    }
  }

  int fd_;
  std::chrono::milliseconds write_timeout_;
  Clock::time_point deadline_ = Clock::now();
  std::string buf_;
  size_t off_ = 0;
};

// What reading one request's framing came to.
struct Framed {
  bool connection_gone = false;  // closed, or cut off without a byte to answer
  FramingError error;            // refused: answer it and close
  std::string target;            // for the answer's shape, when the request line parsed
};

// Reads a request's head (and a chunked body) from `strm`, checks its framing
// and puts back the request httplib is to read: the same head, with one
// Content-Length, and for a chunked request the decoded body.
Framed FrameRequest(DeadlineStream& strm, std::chrono::milliseconds header_timeout,
                    std::chrono::milliseconds body_timeout, uint64_t max_body_bytes) {
  Framed f;
  size_t scanned = 0, end = std::string_view::npos;
  for (;;) {
    std::string_view b = strm.buffered();
    size_t leading = 0;
    while (b.substr(leading, 2) == "\r\n") leading += 2;  // empty lines before a request are skipped
    if (leading > 0) {
      strm.Consume(leading);
      scanned = 0;
      continue;
    }
    end = b.find("\r\n\r\n", scanned);
    if (end != std::string_view::npos) break;
    if (b.size() > kMaxHeadBytes) {
      f.error = {431, "the request head exceeds " + std::to_string(kMaxHeadBytes) + " bytes"};
      return f;
    }
    scanned = b.size() >= 3 ? b.size() - 3 : 0;
    DeadlineStream::Fill fill = strm.ReadMore();
    if (fill == DeadlineStream::Fill::kTimedOut && !strm.buffered().empty()) {
      f.error = {408, "request headers not received within " + std::to_string(header_timeout.count()) + " ms"};
      return f;
    }
    if (fill != DeadlineStream::Fill::kOk) {
      f.connection_gone = true;
      return f;
    }
  }
  const size_t head_bytes = end + 4;
  RequestHead head;
  f.error = ParseRequestHead(strm.buffered().substr(0, head_bytes), &head);
  f.target = head.target;
  if (f.error.failed()) return f;
  strm.Consume(head_bytes);
  if (!head.chunked) {
    strm.Unread(HeadWithLength(head, head.content_length));
    return f;
  }
  if (head.expects_continue && !strm.WriteAll("HTTP/1.1 100 Continue\r\n\r\n")) {
    f.connection_gone = true;
    return f;
  }
  strm.set_read_deadline(Clock::now() + body_timeout);
  ChunkedDecoder chunked(max_body_bytes);
  while (!chunked.done()) {
    if (strm.buffered().empty()) {
      DeadlineStream::Fill fill = strm.ReadMore();
      if (fill == DeadlineStream::Fill::kTimedOut) {
        f.error = {408, "request body not received within " + std::to_string(body_timeout.count()) + " ms"};
        return f;
      }
      if (fill != DeadlineStream::Fill::kOk) {
        f.connection_gone = true;
        return f;
      }
    }
    strm.Consume(chunked.Feed(strm.buffered()));
    if (chunked.error().failed()) {
      f.error = chunked.error();
      return f;
    }
  }
  std::string body = std::move(chunked.body());
  strm.Unread(HeadWithLength(head, body.size()) + body);
  return f;
}

}  // namespace

bool GuardedListener::OnOverflowConnection() { return t_overflow; }
RequestSlot& GuardedListener::CurrentRequest() { return t_request; }

int GuardedListener::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

int64_t GuardedListener::rejected_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rejected_;
}

bool GuardedListener::Register(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  int& mine = per_client_[client];
  if (open_ >= limits_.max_connections || mine >= limits_.max_connections_per_client) {
    if (mine == 0) per_client_.erase(client);
    ++rejected_;
    return false;
  }
  ++open_;
  ++mine;
  return true;
}

void GuardedListener::Unregister(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_;
  if (--per_client_[client] <= 0) per_client_.erase(client);
}

// The worker pool httplib hands accepted sockets to, with the waiting room
// its connections park in; httplib makes it when serving starts and shuts it
// down when serving ends.
class GuardedListener::Workers final : public httplib::TaskQueue {
 public:
  Workers(size_t threads, size_t idle_capacity, std::atomic<Workers*>* published)
      : room(idle_capacity), pool_(threads), published_(published) {}
  void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
  void shutdown() override {
    room.Stop();  // closes the parked connections; nothing is handed back after
    pool_.shutdown();
    published_->store(nullptr);  // httplib deletes this next
  }

  WaitingRoom room;

 private:
  httplib::ThreadPool pool_;
  std::atomic<Workers*>* published_;
};

struct GuardedListener::Connection {
  Connection(int fd, std::chrono::milliseconds write_timeout, size_t requests)
      : fd(fd), client(PeerAddress(fd)), strm(fd, write_timeout), requests_left(requests) {}
  int fd;
  std::string client;
  DeadlineStream strm;
  size_t requests_left;
};

GuardedListener::GuardedListener(ConnectionLimits limits) : limits_(limits) {
  new_task_queue = [this] {
    auto* w = new Workers(static_cast<size_t>(std::max(1, limits_.workers)),
                          static_cast<size_t>(std::max(1, limits_.max_idle_connections)), &workers_);
    workers_.store(w);
    return w;
  };
}

GuardedListener::~GuardedListener() = default;

void GuardedListener::WidenBacklog() {
  socket_t s = svr_sock_;
  if (s != INVALID_SOCKET) ::listen(s, SOMAXCONN);
}

size_t GuardedListener::idle_connections() const {
  Workers* w = workers_.load();
  return w ? w->room.parked() : 0;
}

bool GuardedListener::process_and_close_socket(socket_t sock) {
  Serve(std::make_shared<Connection>(sock, limits_.write_timeout, std::max<size_t>(1, keep_alive_max_count_)));
  return true;
}

void GuardedListener::Serve(std::shared_ptr<Connection> c) {
  for (;;) {
    if (svr_sock_ == INVALID_SOCKET) break;
    if (!c->strm.has_buffered()) {
      char byte;
      ssize_t n = ::recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0) break;  // the peer closed
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
        Park(std::move(c));
        return;
      }
    }
    if (!ServeRequest(*c) || --c->requests_left == 0) break;
  }
  Close(*c);
}

void GuardedListener::Park(std::shared_ptr<Connection> c) {
  Workers* w = workers_.load();
  if (!w) {
    Close(*c);
    return;
  }
  int fd = c->fd;
  w->room.Park(fd, Clock::now() + limits_.idle_timeout, [this, w, c = std::move(c)](bool readable) mutable {
    if (readable) {
      w->enqueue([this, c = std::move(c)]() mutable { Serve(std::move(c)); });
    } else {
      Close(*c);
    }
  });
}

void GuardedListener::Close(Connection& c) {
  ::shutdown(c.fd, SHUT_RDWR);
  ::close(c.fd);
}

bool GuardedListener::ServeRequest(Connection& c) {
  bool overflow = !Register(c.client);
  t_overflow = overflow;
  DeadlineStream& strm = c.strm;
  t_request = RequestSlot{next_request_id_++, Clock::now(), false};
  std::chrono::milliseconds header_timeout = overflow ? limits_.overflow_timeout : limits_.header_timeout;
  std::chrono::milliseconds body_timeout = overflow ? limits_.overflow_timeout : limits_.body_timeout;
  strm.set_read_deadline(Clock::now() + header_timeout);
  Framed framed = FrameRequest(strm, header_timeout, body_timeout, payload_max_length_);
  bool keep = false;
  if (framed.error.failed()) {
    // The bytes after a refused head cannot be framed: answer and close.
    std::string body = framing_error_body_ ? framing_error_body_(framed.error.status, framed.target, framed.error.message)
                                           : "{\"error\":\"" + framed.error.message + "\"}";
    strm.WriteAll("HTTP/1.1 " + std::to_string(framed.error.status) + " " + ReasonPhrase(framed.error.status) +
                  "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n\r\n" + body);
  } else if (!framed.connection_gone) {
    bool connection_closed = false;
    bool ok = process_request(strm, overflow || c.requests_left == 1, connection_closed, [&](httplib::Request&) {
      // The headers are in: the body has its own deadline.
      strm.set_read_deadline(Clock::now() + body_timeout);
    });
    // A request cut off by its deadline leaves the stream mid-request; a
    // connection past a cap ends after its one answer.
    keep = ok && !connection_closed && !overflow && !t_request.close_connection && !t_request.read_timed_out;
  }
  t_overflow = false;
  if (!overflow) Unregister(c.client);
  return keep;
}

}  // namespace lineage::server
