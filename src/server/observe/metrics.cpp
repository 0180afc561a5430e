#include "server/observe/metrics.h"

#include <cstdio>

namespace lineage::server {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Header(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Sample(std::string* out, const std::string& name, double value, const std::string& labels = "") {
  *out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + Num(value) + "\n";
}

// Latency buckets from 1 ms to 5 min, in seconds.
std::vector<double> LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_(std::move(upper_bounds)), counts_(upper_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < upper_.size() && value > upper_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, std::string* out) const {
  int64_t cumulative = 0;
  for (size_t i = 0; i < upper_.size(); ++i) {
    cumulative += counts_[i];
    Sample(out, name + "_bucket", static_cast<double>(cumulative), "le=\"" + Num(upper_[i]) + "\"");
  }
  Sample(out, name + "_bucket", static_cast<double>(count_), "le=\"+Inf\"");
  Sample(out, name + "_sum", sum_);
  Sample(out, name + "_count", static_cast<double>(count_));
}

Metrics::Metrics()
    : ttft_(LatencyBuckets()), admission_(LatencyBuckets()), prefill_(LatencyBuckets()), commit_(LatencyBuckets()) {}

void Metrics::CountRequest(const std::string& endpoint, int http_status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, http_status}];
}

void Metrics::ObserveGeneration(const RequestReport& r) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generations_;
  prompt_tokens_ += r.prompt_tokens;
  cached_tokens_ += r.cached_tokens;
  reused_tokens_ += r.reused_tokens;
  completion_tokens_ += r.completion_tokens;
  draft_tokens_ += r.draft_tokens;
  draft_accepted_ += r.draft_accepted;
  captures_ += r.captures;
  ++restores_[{r.restore_kind, r.restore_tier}];
  if (r.first_token_us >= 0) ttft_.Observe(r.first_token_us * 1e-6);
  admission_.Observe(r.admission_us * 1e-6);
  prefill_.Observe(r.prefill_us * 1e-6);
  commit_.Observe(r.commit_us * 1e-6);
}

std::string Metrics::RenderPrometheus(const CacheStats& c, const ServerGauges& g) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Header(&out, "lineage_requests_total", "counter", "HTTP requests by endpoint and status code.");
  for (const auto& [key, n] : requests_)
    Sample(&out, "lineage_requests_total", n, "endpoint=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"");
  Header(&out, "lineage_requests_in_flight", "gauge", "Generations running or queued.");
  Sample(&out, "lineage_requests_in_flight", g.in_flight);
  Header(&out, "lineage_requests_in_flight_max", "gauge", "Generations admitted at most (running or queued).");
  Sample(&out, "lineage_requests_in_flight_max", g.max_in_flight);
  Header(&out, "lineage_sequences_live", "gauge", "Sequences running or waiting to resume (each choice of n its own).");
  Sample(&out, "lineage_sequences_live", c.sequences_live);
  Header(&out, "lineage_connections_open", "gauge", "HTTP connections with a request in progress.");
  Sample(&out, "lineage_connections_open", g.open_connections);
  Header(&out, "lineage_connections_idle", "gauge", "HTTP connections waiting for a request (holding no worker).");
  Sample(&out, "lineage_connections_idle", g.idle_connections);
  Header(&out, "lineage_connections_rejected_total", "counter",
         "Requests received past a connection cap (answered /health or 503).");
  Sample(&out, "lineage_connections_rejected_total", g.rejected_connections);
  Header(&out, "lineage_prompt_tokens_total", "counter", "Prompt tokens of finished generations.");
  Sample(&out, "lineage_prompt_tokens_total", prompt_tokens_);
  Header(&out, "lineage_cached_tokens_total", "counter", "Prompt tokens restored from the cache instead of computed.");
  Sample(&out, "lineage_cached_tokens_total", cached_tokens_);
  Header(&out, "lineage_reused_tokens_total", "counter",
         "Cached tokens moved into place by chunk reuse (--cache-reuse), a part of lineage_cached_tokens_total.");
  Sample(&out, "lineage_reused_tokens_total", reused_tokens_);
  Header(&out, "lineage_completion_tokens_total", "counter", "Generated tokens.");
  Sample(&out, "lineage_completion_tokens_total", completion_tokens_);
  Header(&out, "lineage_draft_tokens_total", "counter", "Draft tokens verified by speculative decoding.");
  Sample(&out, "lineage_draft_tokens_total", draft_tokens_);
  Header(&out, "lineage_draft_accepted_tokens_total", "counter",
         "Draft tokens accepted (generated tokens that took no decode step of their own).");
  Sample(&out, "lineage_draft_accepted_tokens_total", draft_accepted_);
  Header(&out, "lineage_restores_total", "counter", "Generations by the restore point they started from (kind, tier).");
  for (const auto& [key, n] : restores_)
    Sample(&out, "lineage_restores_total", n, "kind=\"" + key.first + "\",tier=\"" + key.second + "\"");
  Header(&out, "lineage_captures_total", "counter", "Recurrent-state checkpoints captured during prefill.");
  Sample(&out, "lineage_captures_total", captures_);
  Header(&out, "lineage_absorptions_total", "counter", "Entries absorbed by the entry that extended them.");
  Sample(&out, "lineage_absorptions_total", c.absorptions);
  Header(&out, "lineage_evictions_total", "counter", "Entries evicted, by tier.");
  Sample(&out, "lineage_evictions_total", c.evictions_ram, "tier=\"ram\"");
  Sample(&out, "lineage_evictions_total", c.evictions_disk, "tier=\"disk\"");
  Header(&out, "lineage_cache_entries", "gauge", "Stored entries (anchors included).");
  Sample(&out, "lineage_cache_entries", c.entries);
  Header(&out, "lineage_cache_checkpoints", "gauge", "Stored checkpoints.");
  Sample(&out, "lineage_cache_checkpoints", c.checkpoints);
  Header(&out, "lineage_cache_anchors", "gauge", "Pinned anchor entries.");
  Sample(&out, "lineage_cache_anchors", c.anchors);
  Header(&out, "lineage_cache_bytes", "gauge", "Bytes held by the cache, by tier.");
  Sample(&out, "lineage_cache_bytes", c.ram_bytes, "tier=\"ram\"");
  Sample(&out, "lineage_cache_bytes", c.disk_bytes, "tier=\"disk\"");
  Header(&out, "lineage_cache_budget_bytes", "gauge", "Byte budget of the cache, by tier.");
  Sample(&out, "lineage_cache_budget_bytes", c.ram_budget_bytes, "tier=\"ram\"");
  Sample(&out, "lineage_cache_budget_bytes", c.disk_budget_bytes, "tier=\"disk\"");
  Header(&out, "lineage_time_to_first_token_seconds", "histogram", "From submission to the first generated token.");
  ttft_.Render("lineage_time_to_first_token_seconds", &out);
  Header(&out, "lineage_admission_seconds", "histogram", "Building the running sequence from the restore point.");
  admission_.Render("lineage_admission_seconds", &out);
  Header(&out, "lineage_prefill_seconds", "histogram", "Computing the uncached part of the prompt.");
  prefill_.Render("lineage_prefill_seconds", &out);
  Header(&out, "lineage_commit_seconds", "histogram", "Turning the prompt-end state into a cache entry.");
  commit_.Render("lineage_commit_seconds", &out);
  return out;
}

nlohmann::ordered_json Metrics::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::ordered_json restores = nlohmann::ordered_json::object();
  for (const auto& [key, n] : restores_) restores[key.first + "/" + key.second] = n;
  return {{"generations", generations_},
          {"prompt_tokens", prompt_tokens_},
          {"cached_tokens", cached_tokens_},
          {"reused_tokens", reused_tokens_},
          {"completion_tokens", completion_tokens_},
          {"draft_tokens", draft_tokens_},
          {"draft_accepted", draft_accepted_},
          {"captures", captures_},
          {"restores", restores}};
}

}  // namespace lineage::server
