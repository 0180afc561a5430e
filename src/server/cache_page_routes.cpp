// The routes for people and scripts watching the server: the cache page
// and its data (docs/cache-page.md), and llama-server's utility endpoints
// (utility_endpoints.h). None of them runs a generation.
#include <httplib.h>

#include <algorithm>

#include "core/clock.h"
#include "server/api/api_error.h"
#include "server/cache_page_asset.h"
#include "server/http_server_impl.h"
#include "server/replies/response_format.h"
#include "server/utility_endpoints.h"

namespace lineage::server {

void HttpServer::AddObserverRoutes() {
  using json = nlohmann::ordered_json;
  GuardedListener& http = impl_->http;

  http.Get("/cache", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(reinterpret_cast<const char*>(kCachePageHtml), kCachePageHtmlSize, "text/html; charset=utf-8");
    res.set_header("Cache-Control", "no-cache");
    // The page needs nothing but itself and this server's JSON.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
                   "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.set_header("X-Content-Type-Options", "nosniff");
  });
  http.Get("/v1/cache/lineages", [this](const httplib::Request&, httplib::Response& res) {
    json body = {{"object", "cache.lineages"},
                 {"model", backend_->model_id()},
                 {"context_tokens", backend_->context_tokens()},
                 {"now_ms", WallMs()},
                 {"totals", CacheStatsBody()},
                 {"lineages", backend_->Lineages()},
                 {"in_flight", impl_->history.Live()},
                 {"recent", impl_->history.Finished()}};
    res.set_content(Dump(body), "application/json");
    res.set_header("Cache-Control", "no-store");
  });
  http.Get("/props", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Dump(PropsResponse(*backend_, options_.build_info, impl_->history.Processing())),
                    "application/json");
  });
  http.Get("/slots", [this](const httplib::Request& req, httplib::Response& res) {
    const int total = backend_->Props().total_slots;
    json slots = impl_->history.Slots(total, backend_->context_tokens());
    const auto busy = std::count_if(slots.begin(), slots.end(), [](const json& s) { return s["is_processing"] == true; });
    if (req.get_param_value("fail_on_no_slot") == "1" && busy >= total)
      return SendError(res, MakeHttpError(ApiFlavor::kOpenAi, 503, "no slot available"));
    res.set_content(Dump(slots), "application/json");
  });

  auto post = [this](const char* path, auto respond) {
    impl_->http.Post(path, [this, respond](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
      std::string body;
      if (!ReadBody(req, res, reader, &body)) return;
      Result<json> out = respond(body);
      if (!out.ok()) return SendError(res, MakeHttpError(ApiFlavor::kOpenAi, out.status()));
      res.set_content(Dump(*out), "application/json");
    });
  };
  post("/tokenize", [this](const std::string& body) { return TokenizeResponse(*backend_, body); });
  post("/detokenize", [this](const std::string& body) { return DetokenizeResponse(*backend_, body); });
  post("/apply-template", [this](const std::string& body) { return ApplyTemplateResponse(*backend_, body); });
}

}  // namespace lineage::server
