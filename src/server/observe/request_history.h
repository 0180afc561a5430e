// RequestHistory: the generations in progress and the last few that ended,
// for people and scripts watching a server (the cache page's request rows,
// /v1/cache/lineages, /slots). The request log says the same in words, one
// line per request; this keeps it in memory, bounded.
//
// Thread-safety: every method may be called from any connection thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "server/api/api_request.h"
#include "server/generation/backend.h"

namespace lineage::server {

class RequestHistory {
 public:
  explicit RequestHistory(size_t capacity = 100) : capacity_(capacity) {}

  // A generation submitted; `stream` is read for its progress only.
  void Begin(int64_t id, const std::string& path, const ApiRequest& request, const Submission& submission);
  // The generation `id` ended with `status`; moves it to the finished ones.
  void End(int64_t id, int status, const RequestReport& report, const std::string& finish);

  // Oldest first, at most `capacity` (docs/cache-page.md gives the fields).
  nlohmann::ordered_json Finished() const;
  nlohmann::ordered_json Live() const;
  // llama-server's /slots: one object per live generation, then idle slots
  // up to `total_slots`; `context_tokens` is each slot's n_ctx.
  nlohmann::ordered_json Slots(int total_slots, int64_t context_tokens) const;
  // Live generations the scheduler has admitted (is_processing in /slots).
  int Processing() const;

 private:
  struct Running {
    std::string path;
    int64_t started_ms = 0;
    int64_t prompt_tokens = 0;
    int64_t anchor_tokens = 0;
    SamplingParams sampling;
    bool stream = false;
    std::shared_ptr<const GenerationStream> generation;
  };
  struct Ended {
    int64_t id = 0;
    std::string path;
    int status = 0;
    int64_t started_ms = 0;
    int64_t ended_ms = 0;
    RequestReport report;
    std::string finish;
  };

  size_t capacity_;
  mutable std::mutex mu_;
  std::map<int64_t, Running> live_;
  std::deque<Ended> finished_;
};

}  // namespace lineage::server
