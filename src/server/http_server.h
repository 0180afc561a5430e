// HttpServer: the HTTP front of lineage (DESIGN.md §6) over a Backend.
//
// Routes: POST /v1/chat/completions, /v1/completions, /v1/messages,
// /v1/messages/count_tokens, /v1/responses; GET /v1/models, /health,
// /metrics, /v1/cache/stats.
// - Every route but /health requires the API key when one is set, as
//   "Authorization: Bearer KEY" or "x-api-key: KEY".
// - Bodies are read by the routes themselves, whatever their content type
//   (curl -d sends JSON as a form): above max_body_bytes, declared or
//   chunked, they get 413; a body that does not arrive within body_timeout
//   gets 408. More than max_in_flight running generations get 503 with
//   Retry-After, and /health answers 503 while no generation can be
//   admitted. Bad input gets a 4xx in the API's own error shape. None of
//   these affect the next request.
// - A generation's place among max_in_flight is an Admission ticket: it is
//   given back however the request ends, exceptions included.
// - Every request, whatever its route or status, writes one log line (GETs
//   of /health and /metrics answered 200 are not logged) and is counted in
//   /metrics by route and status; unknown paths are counted as "other".
// - Connections: see GuardedListener (deadlines for headers and bodies,
//   caps in total and per client address).
// - Streaming responses run on the connection's thread, pulling from the
//   backend; a client that goes away cancels its generation.
// Ownership: the server borrows the backend, which must outlive it.
// Thread-safety: Start/Stop from one controlling thread; handlers run on
// the server's pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "server/api/api_error.h"
#include "server/generation/backend.h"
#include "server/observe/metrics.h"

namespace httplib {
class ContentReader;
struct Request;
struct Response;
}  // namespace httplib

namespace lineage::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                       // 1..65535; 0 picks a free port
  std::string api_key;                   // empty: no authentication
  size_t max_body_bytes = 16u << 20;     // a 256k-token context with its tools fits several times over
  int max_in_flight = 64;                // generations running or queued
  int http_threads = 0;                  // 0: max_in_flight + 8
  int max_connections = 0;               // served at once; 0: http_threads - 4 (the rest answer past the caps)
  int max_connections_per_client = 0;    // from one peer address; 0: max_connections
  int max_idle_connections = 0;          // waiting for a request, holding no worker; 0: a quarter of the
                                         // descriptors the process may open, 64..4096
  std::chrono::milliseconds idle_timeout{5000};  // before a connection's first request and between two
  std::chrono::milliseconds header_timeout{30000};  // request line and headers, from their first byte
  std::chrono::milliseconds body_timeout{120000};   // the whole body, from the end of the headers
  int retry_after_s = 1;
  std::chrono::milliseconds keep_alive{5000};  // SSE keep-alive after this much silence
  bool log_requests = true;              // one line per request
  std::string build_info;                // /props: the version line
  std::function<void(const std::string&)> log_sink;  // receives each line; empty: stderr
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
  void SendError(httplib::Response& res, const HttpError& e) const;
  void WriteLog(const std::string& line);
  // Reads the body through a route's content reader, at most
  // max_body_bytes; on failure the response is set (413, 408, 415, 400).
  bool ReadBody(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader,
                std::string* body);
  // /v1/cache/stats's body; /v1/cache/lineages carries it as its totals.
  nlohmann::ordered_json CacheStatsBody() const;
  // The cache page, its data and llama-server's utility endpoints
  // (cache_page_routes.cpp).
  void AddObserverRoutes();

  std::unique_ptr<Impl> impl_;
  Backend* backend_;
  ServerOptions options_;
  Metrics metrics_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace lineage::server
