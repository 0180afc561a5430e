// HttpServer: the HTTP front of lineage (DESIGN.md §6) over a Backend.
//
// Routes: POST /v1/chat/completions, /v1/completions, /v1/messages, /v1/responses;
// GET /v1/models, /health, /metrics, /v1/cache/stats.
// - Every route but /health requires the API key when one is set, as
//   "Authorization: Bearer KEY" or "x-api-key: KEY".
// - Bodies above max_body_bytes get 413; more than max_in_flight running
//   generations get 503 with Retry-After; bad input gets a 4xx in the API's
//   own error shape. None of these affect the next request.
// - Streaming responses run on the connection's thread, pulling from the
//   backend; a client that goes away cancels its generation.
// Ownership: the server borrows the backend, which must outlive it.
// Thread-safety: Start/Stop from one controlling thread; handlers run on
// the server's pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "server/backend.h"
#include "server/metrics.h"

namespace lineage::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                       // 1..65535; 0 picks a free port
  std::string api_key;                   // empty: no authentication
  size_t max_body_bytes = 64u << 20;     // a coding agent's context fits many times over
  int max_in_flight = 64;                // generations running or queued
  int http_threads = 0;                  // 0: max_in_flight + 8
  int retry_after_s = 1;
  std::chrono::milliseconds keep_alive{5000};  // SSE keep-alive after this much silence
  bool log_requests = true;              // one line per request on stderr
};

class HttpServer {
 public:
  HttpServer(Backend* backend, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the socket (port() is then known) without serving yet. A port
  // out of range is kInvalidArgument; a port another process listens on is
  // kIoError naming the cause (the socket is exclusive: no SO_REUSEPORT).
  Status Bind();
  // Serves until Stop(); returns when the listener closes.
  void Serve();
  // Bind() + Serve() on a background thread.
  Status Start();
  void Stop();

  int port() const { return port_; }
  Metrics& metrics() { return metrics_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Backend* backend_;
  ServerOptions options_;
  Metrics metrics_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace lineage::server
