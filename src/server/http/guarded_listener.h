// GuardedListener: httplib's server with the connection handling a public
// endpoint needs, so that slow or greedy clients cost their own requests
// only (docs/server.md, "Limits").
//
// - Deadlines, not idle timeouts: a request's line and headers must arrive
//   within header_timeout of its first byte, and its body within
//   body_timeout of the end of its headers, however the bytes trickle in
//   (a client sending one byte a second cannot hold a worker for long).
// - Caps: at most max_connections connections have a request in progress
//   at once, and at most max_connections_per_client from one peer address.
//   A request past a cap is still read (with a short deadline) so that GET
//   /health gets its answer; every other request gets 503 (the route
//   decides, through OnOverflowConnection()) and its connection is closed.
//   max_connections stays below the worker count, so some workers are always
//   free for these answers.
// - Idle connections hold no worker: a connection with nothing to read (just
//   accepted, or between keep-alive requests) waits in a WaitingRoom, up to
//   idle_timeout and max_idle_connections of them, and goes back to a worker
//   when its next request's first byte arrives. Idle connections do not
//   count against the caps.
// - Framing: each request's head is read and checked strictly here
//   (http_framing.h) before httplib parses it; a refused head is answered
//   with its status and the connection closed. A chunked body is decoded
//   here and handed on with a Content-Length.
// - Per request, the listener keeps a RequestSlot (id, start time) that
//   routes and the request logger read on the connection's thread.
// Thread-safety: Serve/Stop as httplib::Server; the counters are guarded.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace lineage::server {

struct ConnectionLimits {
  int max_connections = 60;
  int max_connections_per_client = 60;
  std::chrono::milliseconds header_timeout{30000};
  std::chrono::milliseconds body_timeout{120000};
  std::chrono::milliseconds idle_timeout{5000};    // before a connection's first request, and between two
  int workers = 64;                  // HTTP worker threads
  int max_idle_connections = 1024;   // waiting for a request; past it the longest waiting is closed
  std::chrono::milliseconds write_timeout{600000}; // one blocked send
  // Over a cap: how long the one request answered on the connection may take to arrive.
  std::chrono::milliseconds overflow_timeout{2000};
};

// The request being served on the calling thread.
struct RequestSlot {
  int64_t id = 0;
  std::chrono::steady_clock::time_point start;
  bool logged_by_route = false;  // the route writes the log line and counts it itself
  bool close_connection = false; // the request's body was left unread: end the connection after the answer
  bool read_timed_out = false;   // a read passed the header or body deadline (the connection then ends)
};

class GuardedListener : public httplib::Server {
 public:
  explicit GuardedListener(ConnectionLimits limits);
  ~GuardedListener() override;

  // Raises the bound socket's accept backlog to the system's maximum (the
  // library's 5 dropped the SYNs of a burst). After binding, before Serve.
  void WidenBacklog();

  // On a connection's thread: whether it was accepted past a cap.
  static bool OnOverflowConnection();
  // On a connection's thread: the request in progress.
  static RequestSlot& CurrentRequest();

  // Renders the JSON body of the answer to a request refused for its framing
  // (http_framing.h): (status, target or "", message). Set before serving.
  using FramingErrorBody = std::function<std::string(int status, const std::string& target, const std::string& message)>;
  void set_framing_error_body(FramingErrorBody f) { framing_error_body_ = std::move(f); }

  int open_connections() const;
  size_t idle_connections() const;
  int64_t rejected_connections() const;

 private:
  struct Connection;
  class Workers;

  bool process_and_close_socket(socket_t sock) override;
  // On a worker: serves the connection's requests while their bytes are
  // there, then parks or closes it.
  void Serve(std::shared_ptr<Connection> c);
  // One request; false when the connection is to end after it.
  bool ServeRequest(Connection& c);
  void Park(std::shared_ptr<Connection> c);
  void Close(Connection& c);
  // Takes a place for `client`; false when a cap is reached.
  bool Register(const std::string& client);
  void Unregister(const std::string& client);

  const ConnectionLimits limits_;
  FramingErrorBody framing_error_body_;
  mutable std::mutex mu_;
  int open_ = 0;
  int64_t rejected_ = 0;
  std::map<std::string, int> per_client_;
  std::atomic<int64_t> next_request_id_{1};
  std::atomic<Workers*> workers_{nullptr};  // while serving
};

}  // namespace lineage::server
