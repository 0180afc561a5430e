// Metrics: the server's counters and histograms, rendered in the Prometheus
// text exposition format (version 0.0.4) for /metrics.
//
// Request-level figures come from each request's RequestReport; cache-level
// figures (RAM and disk bytes, absorptions, evictions) are read from the
// backend's CacheStats at scrape time, so they are never stale or doubled.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/generation/backend.h"

namespace lineage::server {

// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);
  // Appends the _bucket, _sum and _count lines of metric `name`.
  void Render(const std::string& name, std::string* out) const;
  int64_t count() const { return count_; }

 private:
  std::vector<double> upper_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

// Gauges owned by the HTTP layer, read at scrape time.
struct ServerGauges {
  int64_t in_flight = 0;        // generations holding an admission ticket
  int64_t max_in_flight = 0;
  int64_t open_connections = 0;     // with a request in progress
  int64_t idle_connections = 0;     // waiting for a request, holding no worker
  int64_t rejected_connections = 0;  // requests received past a connection cap, since start
};

class Metrics {
 public:
  Metrics();

  // One finished HTTP request on `endpoint` ("/v1/chat/completions"). The
  // caller bounds the set of endpoints (unknown paths share one label).
  void CountRequest(const std::string& endpoint, int http_status);
  // One finished generation.
  void ObserveGeneration(const RequestReport& report);

  std::string RenderPrometheus(const CacheStats& cache, const ServerGauges& gauges) const;
  // Summary for /v1/cache/stats: hit counts and token totals.
  nlohmann::ordered_json Summary() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;           // (endpoint, status)
  std::map<std::pair<std::string, std::string>, int64_t> restores_;   // (kind, tier)
  int64_t generations_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t cached_tokens_ = 0;
  int64_t draft_tokens_ = 0, draft_accepted_ = 0;  // speculative decoding
  int64_t reused_tokens_ = 0;  // part of cached_tokens_: chunk reuse by KV shifting
  int64_t completion_tokens_ = 0;
  int64_t captures_ = 0;
  Histogram ttft_, admission_, prefill_, commit_;
};

}  // namespace lineage::server
