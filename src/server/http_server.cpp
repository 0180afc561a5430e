#include "server/http_server.h"

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "server/anthropic_request.h"
#include "server/api_error.h"
#include "server/connection_probe.h"
#include "server/openai_request.h"
#include "server/request_log.h"
#include "server/response_driver.h"
#include "server/responses_request.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

ApiFlavor FlavorOf(const std::string& path) {
  return path.rfind("/v1/messages", 0) == 0 ? ApiFlavor::kAnthropic : ApiFlavor::kOpenAi;
}

void SendError(httplib::Response& res, const HttpError& e) {
  res.status = e.http_status;
  res.set_content(e.body, "application/json");
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool Authorized(const httplib::Request& req, const std::string& key) {
  if (key.empty()) return true;
  std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0 &&
      ConstantTimeEquals(auth.substr(kBearer.size()), key))
    return true;
  return req.has_header("x-api-key") && ConstantTimeEquals(req.get_header_value("x-api-key"), key);
}

// Only SO_REUSEADDR (a restart may bind while old connections linger in
// TIME_WAIT). httplib's default adds SO_REUSEPORT, with which a second
// server binds a busy port and the kernel splits the traffic between them.
void ExclusiveSocketOptions(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

// Why host:port cannot be bound: the errno of one more attempt, as httplib
// does not keep it.
std::string BindError(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return gai_strerror(rc);
  std::string why = "unknown error";
  for (addrinfo* a = found; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    ExclusiveSocketOptions(fd);
    int rc = ::bind(fd, a->ai_addr, a->ai_addrlen);
    int err = errno;
    ::close(fd);
    if (rc == 0) continue;
    why = std::strerror(err);
    if (err == EADDRINUSE) why += " (another server is listening on that port)";
    break;
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace

struct HttpServer::Impl {
  httplib::Server http;
  std::atomic<int> in_flight{0};
  std::atomic<int64_t> next_request_id{1};
  std::mutex log_mu;
};

HttpServer::HttpServer(Backend* backend, ServerOptions options)
    : impl_(std::make_unique<Impl>()), backend_(backend), options_(std::move(options)) {
  httplib::Server& http = impl_->http;
  int threads = options_.http_threads > 0 ? options_.http_threads : options_.max_in_flight + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_socket_options(ExclusiveSocketOptions);
  http.set_payload_max_length(options_.max_body_bytes);
  http.set_read_timeout(600, 0);
  http.set_write_timeout(600, 0);

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path != "/health" && !Authorized(req, options_.api_key)) {
      SendError(res, MakeHttpError(FlavorOf(req.path), 401, "invalid or missing API key"));
      metrics_.CountRequest(req.path, 401);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length") &&
        std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) > options_.max_body_bytes) {
      SendError(res, MakeHttpError(FlavorOf(req.path), 413,
                                   "request body exceeds " + std::to_string(options_.max_body_bytes) + " bytes"));
      metrics_.CountRequest(req.path, 413);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Errors raised inside httplib (413 on a chunked body, 404, 400) get a body
  // in the API's shape too.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const char* what = res.status == 404 ? "no such route: " : "request failed: ";
    SendError(res, MakeHttpError(FlavorOf(req.path), res.status, what + req.method + " " + req.path));
  });

  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  http.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    json model = {{"id", backend_->model_id()}, {"object", "model"}, {"created", 0}, {"owned_by", "lineage"},
                  {"type", "model"}, {"display_name", backend_->model_id()},
                  {"meta", {{"n_ctx", backend_->context_tokens()}}}};
    res.set_content(Dump({{"object", "list"}, {"data", json::array({model})}}), "application/json");
    metrics_.CountRequest(req.path, 200);
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.RenderPrometheus(backend_->Stats()), "text/plain; version=0.0.4");
  });
  http.Get("/v1/cache/stats", [this](const httplib::Request& req, httplib::Response& res) {
    CacheStats c = backend_->Stats();
    json body = {{"entries", c.entries}, {"checkpoints", c.checkpoints}, {"anchors", c.anchors},
                 {"ram_bytes", c.ram_bytes}, {"ram_budget_bytes", c.ram_budget_bytes}, {"disk_bytes", c.disk_bytes},
                 {"disk_budget_bytes", c.disk_budget_bytes}, {"absorptions", c.absorptions},
                 {"evictions", {{"ram", c.evictions_ram}, {"disk", c.evictions_disk}}},
                 {"requests", metrics_.Summary()}, {"detail", c.extra}};
    res.set_content(Dump(body), "application/json");
    metrics_.CountRequest(req.path, 200);
  });

  auto generation_route = [this](Result<ApiRequest> (*parse)(const std::string&), ApiFlavor flavor) {
    return [this, parse, flavor](const httplib::Request& req, httplib::Response& res) {
      int64_t id = impl_->next_request_id++;
      auto fail = [&](const HttpError& e) {
        SendError(res, e);
        if (e.http_status == 503) res.set_header("Retry-After", std::to_string(options_.retry_after_s));
        metrics_.CountRequest(req.path, e.http_status);
        if (options_.log_requests) {
          std::lock_guard<std::mutex> lock(impl_->log_mu);
          std::fprintf(stderr, "req=%lld %s %s %d %s\n", static_cast<long long>(id), req.method.c_str(),
                       req.path.c_str(), e.http_status, e.body.c_str());
        }
      };
      Result<ApiRequest> parsed = parse(req.body);
      if (!parsed.ok()) return fail(MakeHttpError(flavor, parsed.status()));
      if (impl_->in_flight.fetch_add(1) >= options_.max_in_flight) {
        impl_->in_flight.fetch_sub(1);
        return fail(MakeHttpError(flavor, 503, "server is at capacity; retry later"));
      }
      Result<Submission> sub = backend_->Submit(*parsed);
      if (!sub.ok()) {
        impl_->in_flight.fetch_sub(1);
        return fail(MakeHttpError(flavor, sub.status()));
      }
      metrics_.AddInFlight(1);
      auto formatter = flavor == ApiFlavor::kAnthropic ? MakeAnthropicFormatter(*parsed, backend_->model_id())
                                                       : MakeOpenAiFormatter(*parsed, backend_->model_id());
      auto driver = std::make_shared<ResponseDriver>(*parsed, std::move(sub).value(), std::move(formatter));
      std::string method = req.method, path = req.path;
      // Runs once when the response ends, however it ends.
      auto finish = [this, driver, id, method, path](int status) {
        if (!driver->finished() || driver->client_gone()) driver->Drain(std::chrono::milliseconds(2000));
        impl_->in_flight.fetch_sub(1);
        metrics_.AddInFlight(-1);
        metrics_.CountRequest(path, status);
        metrics_.ObserveGeneration(driver->report());
        if (options_.log_requests) {
          std::string line = FormatRequestLog(id, method, path, status, driver->report(),
                                              driver->client_gone() ? "disconnected" : FinishReasonName(driver->backend_finish()));
          std::lock_guard<std::mutex> lock(impl_->log_mu);
          std::fprintf(stderr, "%s\n", line.c_str());
        }
      };
      if (!parsed->stream) {
        std::string body;
        // Looked up at the first poll (a quarter second in), so a short
        // request never scans the process's descriptors.
        std::optional<std::optional<ConnectionProbe>> probe;
        Status st = driver->RunToEnd(&body, [&] {
          if (!probe) probe = ConnectionProbe::Find(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
          return *probe && (*probe)->PeerClosed();
        });
        if (driver->client_gone()) {
          // Nobody reads the reply; 499 (client closed request) for the log and metrics.
          finish(499);
          return;
        }
        if (!st.ok()) {
          HttpError e = MakeHttpError(flavor, st);
          SendError(res, e);
          finish(e.http_status);
          return;
        }
        res.set_content(body, "application/json");
        finish(200);
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");
      std::chrono::milliseconds keep_alive = options_.keep_alive;
      res.set_chunked_content_provider(
          "text/event-stream",
          [driver, keep_alive](size_t, httplib::DataSink& sink) {
            auto write = [&sink](std::string_view s) { return sink.write(s.data(), s.size()); };
            if (driver->Step(write, std::chrono::milliseconds(100), keep_alive)) return true;
            if (driver->client_gone()) return false;
            sink.done();
            return true;
          },
          [finish](bool) { finish(200); });
    };
  };
  http.Post("/v1/messages/count_tokens", [this](const httplib::Request& req, httplib::Response& res) {
    Result<ApiRequest> parsed = ParseAnthropicCountTokensRequest(req.body);
    Result<int64_t> n = parsed.ok() ? backend_->CountPromptTokens(*parsed) : Result<int64_t>(parsed.status());
    if (!n.ok()) {
      HttpError e = MakeHttpError(ApiFlavor::kAnthropic, n.status());
      SendError(res, e);
      metrics_.CountRequest(req.path, e.http_status);
      return;
    }
    res.set_content(Dump({{"input_tokens", *n}}), "application/json");
    metrics_.CountRequest(req.path, 200);
  });
  http.Post("/v1/chat/completions", generation_route(&ParseOpenAiChatRequest, ApiFlavor::kOpenAi));
  http.Post("/v1/completions", generation_route(&ParseOpenAiCompletionRequest, ApiFlavor::kOpenAi));
  http.Post("/v1/messages", generation_route(&ParseAnthropicMessagesRequest, ApiFlavor::kAnthropic));
  http.Post("/v1/responses", generation_route(&ParseOpenAiResponsesRequest, ApiFlavor::kOpenAi));
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Bind() {
  if (options_.port < 0 || options_.port > 65535)
    return InvalidArgument("port " + std::to_string(options_.port) + " is out of range (1..65535, or 0 for any free port)");
  if (options_.port == 0) {
    port_ = impl_->http.bind_to_any_port(options_.host.c_str());
    if (port_ <= 0) return IoError("cannot bind " + options_.host);
  } else {
    if (!impl_->http.bind_to_port(options_.host.c_str(), options_.port))
      return IoError("cannot bind " + options_.host + ":" + std::to_string(options_.port) + ": " +
                     BindError(options_.host, options_.port));
    port_ = options_.port;
  }
  return Status::Ok();
}

void HttpServer::Serve() { impl_->http.listen_after_bind(); }

Status HttpServer::Start() {
  LINEAGE_RETURN_IF_ERROR(Bind());
  thread_ = std::thread([this] { Serve(); });
  // listen_after_bind sets the running flag first thing; wait for it so a
  // Stop() right after Start() is not lost.
  while (!impl_->http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void HttpServer::Stop() {
  impl_->http.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace lineage::server
