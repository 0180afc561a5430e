#include "server/http_server.h"

#include "server/http_server_impl.h"

#include <httplib.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "server/http/admission.h"
#include "server/api/anthropic_request.h"
#include "server/api/api_error.h"
#include "server/http/connection_probe.h"
#include "server/http/guarded_listener.h"
#include "server/api/openai_request.h"
#include "server/observe/request_history.h"
#include "server/observe/request_log.h"
#include "server/replies/response_driver.h"
#include "server/api/responses_request.h"
#include "text/base64.h"

namespace lineage::server {
namespace {

// Idle connections each hold a descriptor: a quarter of what the process may
// open leaves the rest to the model, the cache and the connections served.
int IdleCapacity() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 4096;
  return static_cast<int>(std::clamp<rlim_t>(lim.rlim_cur / 4, 64, 4096));
}

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

ApiFlavor FlavorOf(const std::string& path) {
  return path.rfind("/v1/messages", 0) == 0 ? ApiFlavor::kAnthropic : ApiFlavor::kOpenAi;
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
  // A browser has no way to send a bearer token when it opens the cache
  // page; it sends the key as the password of HTTP Basic (any user name).
  constexpr std::string_view kBasic = "Basic ";
  if (auth.size() > kBasic.size() && auth.compare(0, kBasic.size(), kBasic) == 0) {
    std::optional<std::string> pair = text::Base64Decode(std::string_view(auth).substr(kBasic.size()));
    size_t colon = pair ? pair->find(':') : std::string::npos;
    if (colon != std::string::npos && ConstantTimeEquals(pair->substr(colon + 1), key)) return true;
  }
  return req.has_header("x-api-key") && ConstantTimeEquals(req.get_header_value("x-api-key"), key);
}

// Every route the server answers: the /metrics labels and what GET / lists.
constexpr const char* kRoutes[] = {"/",          "/v1/chat/completions", "/v1/completions", "/v1/messages",
                                   "/v1/messages/count_tokens", "/v1/responses", "/v1/models", "/health",
                                   "/metrics",   "/v1/cache/stats", "/v1/cache/lineages", "/cache",
                                   "/tokenize",  "/detokenize",     "/apply-template",   "/props",
                                   "/slots"};

// The /metrics label of a path: the routes themselves, and one label for
// everything else, so that clients cannot grow the metrics without bound.
std::string RouteLabel(const std::string& path) {
  for (const char* r : kRoutes)
    if (path == r) return r;
  return "other";
}

// A client-chosen path as it may appear in a log line: printable ASCII,
// bounded, so that no request can forge or flood log lines.
std::string LoggablePath(const std::string& path) {
  constexpr size_t kMaxChars = 200;
  std::string out;
  for (size_t i = 0; i < path.size() && out.size() < kMaxChars; ++i) {
    unsigned char c = static_cast<unsigned char>(path[i]);
    out += (c >= 0x21 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (path.size() > kMaxChars) out += "...";
  return out.empty() ? "-" : out;
}

// The message inside one of our error bodies (api_error.h), for the log.
std::string ErrorMessageOf(const std::string& body) {
  json v = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (v.is_object() && v.contains("error") && v["error"].is_object() && v["error"].contains("message") &&
      v["error"]["message"].is_string())
    return v["error"]["message"].get<std::string>();
  return "";
}

double MillisSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

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

void HttpServer::SendError(httplib::Response& res, const HttpError& e) const {
  res.status = e.http_status;
  res.set_content(e.body, "application/json");
  if (e.http_status == 503) res.set_header("Retry-After", std::to_string(options_.retry_after_s));
}

void HttpServer::WriteLog(const std::string& line) {
  if (!options_.log_requests) return;
  std::lock_guard<std::mutex> lock(impl_->log_mu);
  if (options_.log_sink) options_.log_sink(line);
  else std::fprintf(stderr, "%s\n", line.c_str());
}

bool HttpServer::ReadBody(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader,
                          std::string* body) {
  ApiFlavor flavor = FlavorOf(req.path);
  if (req.is_multipart_form_data()) {
    SendError(res, MakeHttpError(flavor, 415, "multipart bodies are not accepted; send JSON"));
    GuardedListener::CurrentRequest().close_connection = true;
    return false;
  }
  bool too_large = false;
  // Any content type is read as JSON: `curl -d` labels JSON as a form.
  bool ok = reader([&](const char* data, size_t n) {
    if (body->size() + n > options_.max_body_bytes) {
      too_large = true;
      return false;
    }
    body->append(data, n);
    return true;
  });
  if (ok) return true;
  GuardedListener::CurrentRequest().close_connection = true;  // the rest of the body is unread
  if (too_large || res.status == 413) {
    SendError(res, MakeHttpError(flavor, 413, "request body exceeds " + std::to_string(options_.max_body_bytes) + " bytes"));
  } else if (GuardedListener::CurrentRequest().read_timed_out) {
    SendError(res, MakeHttpError(flavor, 408, "request body not received within " +
                                                  std::to_string(options_.body_timeout.count()) + " ms"));
  } else {
    SendError(res, MakeHttpError(flavor, 400, "request body could not be read"));
  }
  return false;
}

HttpServer::HttpServer(Backend* backend, ServerOptions options)
    : backend_(backend), options_(std::move(options)) {
  int threads = options_.http_threads > 0 ? options_.http_threads : options_.max_in_flight + 8;
  ConnectionLimits limits;
  // A few workers always stay free to answer connections past the caps.
  limits.max_connections = options_.max_connections > 0 ? options_.max_connections : std::max(1, threads - 4);
  limits.max_connections_per_client =
      options_.max_connections_per_client > 0 ? options_.max_connections_per_client : limits.max_connections;
  limits.header_timeout = options_.header_timeout;
  limits.body_timeout = options_.body_timeout;
  limits.overflow_timeout = std::min(limits.overflow_timeout, options_.header_timeout);
  limits.idle_timeout = options_.idle_timeout;
  limits.workers = threads;
  limits.max_idle_connections = options_.max_idle_connections > 0 ? options_.max_idle_connections : IdleCapacity();
  impl_ = std::make_unique<Impl>(limits, options_.max_in_flight);
  GuardedListener& http = impl_->http;
  http.set_socket_options(ExclusiveSocketOptions);
  http.set_payload_max_length(options_.max_body_bytes);
  http.set_write_timeout(600, 0);

  // Requests refused for their framing never reach httplib: the listener
  // answers them with this body, and they are logged and counted here.
  http.set_framing_error_body([this](int status, const std::string& target, const std::string& message) {
    metrics_.CountRequest(RouteLabel(target), status);
    if (options_.log_requests) {
      const RequestSlot& slot = GuardedListener::CurrentRequest();
      char line[128];
      std::snprintf(line, sizeof line, "req=%lld - ", static_cast<long long>(slot.id));
      char ms[64];
      std::snprintf(ms, sizeof ms, " total_ms=%.1f", MillisSince(slot.start));
      WriteLog(line + LoggablePath(target.empty() ? "-" : target) + " " + std::to_string(status) + ms + " error=" +
               json(message).dump(-1, ' ', false, json::error_handler_t::replace));
    }
    return MakeHttpError(FlavorOf(target), status, message).body;
  });
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    ApiFlavor flavor = FlavorOf(req.path);
    if (GuardedListener::OnOverflowConnection() && req.path != "/health") {
      SendError(res, MakeHttpError(flavor, 503, "too many connections; retry later"));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path != "/health" && !Authorized(req, options_.api_key)) {
      SendError(res, MakeHttpError(flavor, 401, "invalid or missing API key"));
      res.set_header("WWW-Authenticate", "Bearer");  // RFC 9110 15.5.2: a 401 names its scheme
      // Pages a person opens: the browser asks for the key and sends it on
      // the page's own requests too.
      if (req.method == "GET" && (req.path == "/cache" || req.path.rfind("/v1/cache/", 0) == 0))
        res.set_header("WWW-Authenticate", "Basic realm=\"lineage\", charset=\"UTF-8\"");
      GuardedListener::CurrentRequest().close_connection = true;  // the body, if any, is unread
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length") &&
        std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) > options_.max_body_bytes) {
      SendError(res, MakeHttpError(flavor, 413,
                                   "request body exceeds " + std::to_string(options_.max_body_bytes) + " bytes"));
      GuardedListener::CurrentRequest().close_connection = true;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Errors raised inside httplib (404, 400) get a body in the API's shape too.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (GuardedListener::CurrentRequest().read_timed_out) {
      SendError(res, MakeHttpError(FlavorOf(req.path), 408, "request headers not received within " +
                                                                std::to_string(options_.header_timeout.count()) + " ms"));
      return;
    }
    const char* what = res.status == 404 ? "no such route: " : "request failed: ";
    SendError(res, MakeHttpError(FlavorOf(req.path), res.status, what + req.method + " " + LoggablePath(req.path)));
  });
  // A bug must cost one request: a 500 in the API's shape, logged and
  // counted like any other answer (admission tickets unwind by themselves).
  http.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendError(res, MakeHttpError(FlavorOf(req.path), 500, "internal error: " + what));
  });
  // One line and one count per request the routes do not log themselves.
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const RequestSlot& slot = GuardedListener::CurrentRequest();
    impl_->trimmer.NoteRequestEnded();
    if (slot.logged_by_route) return;
    metrics_.CountRequest(RouteLabel(req.path), res.status);
    bool probe = res.status == 200 && (req.path == "/health" || req.path == "/metrics");
    if (!options_.log_requests || probe) return;
    char head[128];
    std::snprintf(head, sizeof head, "req=%lld ", static_cast<long long>(slot.id));
    std::string line = head + LoggablePath(req.method) + " " + LoggablePath(req.path) + " " + std::to_string(res.status);
    char ms[64];
    std::snprintf(ms, sizeof ms, " total_ms=%.1f", MillisSince(slot.start));
    line += ms;
    if (res.status >= 400) {
      std::string message = ErrorMessageOf(res.body);
      if (!message.empty()) line += " error=" + json(message).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    WriteLog(line);
  });

  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    int in_flight = impl_->admission.in_flight();
    bool full = impl_->admission.full();
    res.status = full ? 503 : 200;
    if (full) res.set_header("Retry-After", std::to_string(options_.retry_after_s));
    res.set_content(Dump({{"status", full ? "busy" : "ok"},
                          {"in_flight", in_flight},
                          {"max_in_flight", impl_->admission.capacity()}}),
                    "application/json");
  });
  // Clients probe the root before their first request (Claude Code sends
  // HEAD /); httplib answers HEAD from the GET route.
  http.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    json endpoints = json::array();
    for (const char* r : kRoutes)
      if (std::string_view(r) != "/") endpoints.push_back(r);
    res.set_content(Dump({{"name", "lineage"}, {"model", backend_->model_id()}, {"endpoints", endpoints}}),
                    "application/json");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json model = {{"id", backend_->model_id()}, {"object", "model"}, {"created", 0}, {"owned_by", "lineage"},
                  {"type", "model"}, {"display_name", backend_->model_id()},
                  {"meta", {{"n_ctx", backend_->context_tokens()}}}};
    res.set_content(Dump({{"object", "list"}, {"data", json::array({model})}}), "application/json");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    ServerGauges g;
    g.in_flight = impl_->admission.in_flight();
    g.max_in_flight = impl_->admission.capacity();
    g.open_connections = impl_->http.open_connections();
    g.idle_connections = static_cast<int64_t>(impl_->http.idle_connections());
    g.rejected_connections = impl_->http.rejected_connections();
    res.set_content(metrics_.RenderPrometheus(backend_->Stats(), g), "text/plain; version=0.0.4");
  });
  http.Get("/v1/cache/stats", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Dump(CacheStatsBody()), "application/json");
  });
  AddObserverRoutes();

  auto generation_route = [this](Result<ApiRequest> (*parse)(const std::string&), ApiFlavor flavor) {
    return [this, parse, flavor](const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) {
      Result<ApiRequest> parsed = InvalidArgument("");
      {
        std::string body;
        if (!ReadBody(req, res, reader, &body)) return;
        parsed = parse(body);
      }  // the body's bytes are not held through the generation
      if (!parsed.ok()) return SendError(res, MakeHttpError(flavor, parsed.status()));
      std::optional<Admission::Ticket> ticket = impl_->admission.TryAdmit();
      if (!ticket) return SendError(res, MakeHttpError(flavor, 503, "server is at capacity; retry later"));
      // One submission per choice (OpenAI `n`; a seed moves on by one per
      // choice, so seeded choices differ), each its own driver and
      // formatter, sharing the response's id.
      const int64_t n = flavor == ApiFlavor::kOpenAi ? parsed->n : 1;
      OpenAiChoice choice{0, n, NewOpenAiId(*parsed), static_cast<int64_t>(std::time(nullptr))};
      std::vector<std::shared_ptr<ResponseDriver>> drivers;
      for (int64_t i = 0; i < n; ++i) {
        ApiRequest request = *parsed;
        if (request.sampling.seed) request.sampling.seed = *request.sampling.seed + static_cast<uint64_t>(i);
        Result<Submission> sub = backend_->Submit(request);
        if (!sub.ok()) {
          for (auto& d : drivers) d->Drain(std::chrono::milliseconds(2000));
          return SendError(res, MakeHttpError(flavor, sub.status()));
        }
        if (i == 0) {
          res.set_header("X-Lineage-Anchor-Tokens", std::to_string(sub->anchor_tokens));
          impl_->history.Begin(GuardedListener::CurrentRequest().id, req.path, *parsed, *sub);
        }
        choice.index = i;
        auto formatter = flavor == ApiFlavor::kAnthropic ? MakeAnthropicFormatter(request, backend_->model_id())
                                                         : MakeOpenAiFormatter(request, backend_->model_id(), choice);
        drivers.push_back(std::make_shared<ResponseDriver>(request, std::move(sub).value(), std::move(formatter)));
      }
      RequestSlot& slot = GuardedListener::CurrentRequest();
      slot.logged_by_route = true;  // by `finish`, with the generation's figures
      std::string method = req.method, path = req.path;
      auto held = std::make_shared<Admission::Ticket>(std::move(*ticket));
      // Runs once when the response ends, however it ends; the ticket goes
      // with the last copy of this closure. The log and history show every
      // choice in one report (MergeChoiceReports); the metrics count each.
      auto finish = [this, drivers, id = slot.id, method, path, held](int status) {
        (void)held;
        for (auto& d : drivers)
          if (!d->finished() || d->client_gone()) d->Drain(std::chrono::milliseconds(2000));
        metrics_.CountRequest(path, status);
        std::vector<RequestReport> reports;
        std::vector<std::string> finishes;
        for (auto& d : drivers) {
          metrics_.ObserveGeneration(d->report());
          reports.push_back(d->report());
          finishes.emplace_back(d->client_gone() ? "disconnected" : FinishReasonName(d->backend_finish()));
        }
        impl_->trimmer.NoteRequestEnded();
        const RequestReport report = MergeChoiceReports(reports);
        const std::string finish_name = JoinFinishes(finishes);
        impl_->history.End(id, status, report, finish_name);
        if (options_.log_requests) WriteLog(FormatRequestLog(id, method, path, status, report, finish_name.c_str()));
      };
      if (!parsed->stream) {
        std::vector<std::string> bodies(drivers.size());
        // Looked up at the first poll (a quarter second in), so a short
        // request never scans the process's descriptors.
        std::optional<std::optional<ConnectionProbe>> probe;
        Status st = Status::Ok();
        bool gone = false;
        for (size_t i = 0; i < drivers.size() && st.ok() && !gone; ++i) {
          st = drivers[i]->RunToEnd(&bodies[i], [&] {
            if (!probe) probe = ConnectionProbe::Find(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
            return *probe && (*probe)->PeerClosed();
          });
          gone = drivers[i]->client_gone();
        }
        if (gone) {
          // The peer closed its side, and a closed client and a half-closed
          // one look the same: the generation is cancelled (the usual reading
          // of an end of input), and the connection ends without a response,
          // which every client reports as an error, never as a 200 without
          // the reply. 499 (client closed request) for the log and metrics.
          ::shutdown((*probe)->fd(), SHUT_WR);
          GuardedListener::CurrentRequest().close_connection = true;
          finish(499);
          return;
        }
        Result<std::string> body = st.ok() && bodies.size() > 1 ? MergeOpenAiChoices(bodies)
                                   : st.ok()                     ? Result<std::string>(std::move(bodies[0]))
                                                                 : Result<std::string>(st);
        if (!body.ok()) {
          HttpError e = MakeHttpError(flavor, body.status());
          SendError(res, e);
          finish(e.http_status);
          return;
        }
        res.set_content(*body, "application/json");
        finish(200);
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");
      std::chrono::milliseconds keep_alive = options_.keep_alive;
      const ApiRequest request = *parsed;
      const std::string model = backend_->model_id();
      res.set_chunked_content_provider(
          "text/event-stream",
          [drivers, keep_alive, request, model, choice](size_t, httplib::DataSink& sink) {
            auto write = [&sink](std::string_view s) { return sink.write(s.data(), s.size()); };
            // Every choice's output as it comes; the wait is shared out.
            const auto wait = std::chrono::milliseconds(100 / static_cast<int64_t>(drivers.size()) + 1);
            bool going = false;
            for (auto& d : drivers) {
              if (!d->finished()) going = d->Step(write, wait, keep_alive) || going;
              if (d->client_gone()) return false;
            }
            if (going) return true;
            if (drivers.size() > 1) {
              FinishInfo total;
              total.prompt_tokens = drivers.front()->report().prompt_tokens;
              total.cached_tokens = drivers.front()->report().cached_tokens;
              for (auto& d : drivers) {
                total.completion_tokens += d->report().completion_tokens;
                total.reasoning_tokens += d->reasoning_tokens();
              }
              if (!write(OpenAiStreamEnd(request, model, choice, total))) return false;
            }
            sink.done();
            return true;
          },
          [finish](bool) { finish(200); });
    };
  };
  http.Post("/v1/messages/count_tokens", [this](const httplib::Request& req, httplib::Response& res,
                                                const httplib::ContentReader& reader) {
    Result<ApiRequest> parsed = InvalidArgument("");
    {
      std::string body;
      if (!ReadBody(req, res, reader, &body)) return;
      parsed = ParseAnthropicCountTokensRequest(body);
    }
    Result<int64_t> n = parsed.ok() ? backend_->CountPromptTokens(*parsed) : Result<int64_t>(parsed.status());
    if (!n.ok()) return SendError(res, MakeHttpError(ApiFlavor::kAnthropic, n.status()));
    res.set_content(Dump({{"input_tokens", *n}}), "application/json");
  });
  http.Post("/v1/chat/completions", generation_route(&ParseOpenAiChatRequest, ApiFlavor::kOpenAi));
  http.Post("/v1/completions", generation_route(&ParseOpenAiCompletionRequest, ApiFlavor::kOpenAi));
  http.Post("/v1/messages", generation_route(&ParseAnthropicMessagesRequest, ApiFlavor::kAnthropic));
  http.Post("/v1/responses", generation_route(&ParseOpenAiResponsesRequest, ApiFlavor::kOpenAi));
}

HttpServer::~HttpServer() { Stop(); }

nlohmann::ordered_json HttpServer::CacheStatsBody() const {
  CacheStats c = backend_->Stats();
  return {{"entries", c.entries}, {"checkpoints", c.checkpoints}, {"anchors", c.anchors},
          {"ram_bytes", c.ram_bytes}, {"ram_budget_bytes", c.ram_budget_bytes}, {"disk_bytes", c.disk_bytes},
          {"disk_budget_bytes", c.disk_budget_bytes}, {"absorptions", c.absorptions},
          {"evictions", {{"ram", c.evictions_ram}, {"disk", c.evictions_disk}}},
          {"requests", metrics_.Summary()}, {"detail", c.extra}};
}

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
  impl_->http.WidenBacklog();
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
