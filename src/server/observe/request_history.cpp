#include "server/observe/request_history.h"

#include "core/clock.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

json Millis(int64_t us) { return us < 0 ? json(nullptr) : json(static_cast<double>(us) / 1000.0); }

}  // namespace

void RequestHistory::Begin(int64_t id, const std::string& path, const ApiRequest& request,
                           const Submission& submission) {
  Running l;
  l.path = path;
  l.started_ms = WallMs();
  l.prompt_tokens = submission.prompt_tokens;
  l.anchor_tokens = submission.anchor_tokens;
  l.sampling = request.sampling;
  l.stream = request.stream;
  l.generation = submission.stream;
  std::lock_guard<std::mutex> lock(mu_);
  live_[id] = std::move(l);
}

void RequestHistory::End(int64_t id, int status, const RequestReport& report, const std::string& finish) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  finished_.push_back({id, it->second.path, status, it->second.started_ms, WallMs(), report, finish});
  live_.erase(it);
  while (finished_.size() > capacity_) finished_.pop_front();
}

json RequestHistory::Finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  json out = json::array();
  for (const Ended& e : finished_) {
    const RequestReport& r = e.report;
    out.push_back({{"id", e.id},
                   {"path", e.path},
                   {"status", e.status},
                   {"started_ms", e.started_ms},
                   {"ended_ms", e.ended_ms},
                   {"prompt_tokens", r.prompt_tokens},
                   {"cached_tokens", r.cached_tokens},
                   {"reused_tokens", r.reused_tokens},
                   {"completion_tokens", r.completion_tokens},
                   {"draft_tokens", r.draft_tokens},
                   {"draft_accepted", r.draft_accepted},
                   {"restore_kind", r.restore_kind},
                   {"restore_tier", r.restore_tier},
                   {"closest_tokens", r.closest_tokens < 0 ? json(nullptr) : json(r.closest_tokens)},
                   {"captures", r.captures},
                   {"admission_ms", Millis(r.admission_us)},
                   {"prefill_ms", Millis(r.prefill_us)},
                   {"commit_ms", Millis(r.commit_us)},
                   {"ttft_ms", Millis(r.first_token_us)},
                   {"total_ms", Millis(r.total_us)},
                   {"finish", e.finish},
                   {"choices", r.choices}});
  }
  return out;
}

json RequestHistory::Live() const {
  std::lock_guard<std::mutex> lock(mu_);
  json out = json::array();
  for (const auto& [id, l] : live_) {
    const GenerationStream::Progress p = l.generation->progress();
    out.push_back({{"id", id},
                   {"path", l.path},
                   {"started_ms", l.started_ms},
                   {"prompt_tokens", l.prompt_tokens},
                   {"anchor_tokens", l.anchor_tokens},
                   {"admitted", p.cached_tokens >= 0},
                   {"cached_tokens", p.cached_tokens < 0 ? json(nullptr) : json(p.cached_tokens)},
                   {"prefilled_tokens", p.prefilled_tokens},
                   {"generated_tokens", p.generated_tokens},
                   {"max_tokens", l.sampling.max_tokens}});
  }
  return out;
}

int RequestHistory::Processing() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [id, l] : live_) n += l.generation->progress().cached_tokens >= 0;
  return n;
}

json RequestHistory::Slots(int total_slots, int64_t context_tokens) const {
  std::lock_guard<std::mutex> lock(mu_);
  json out = json::array();
  for (const auto& [id, l] : live_) {
    const GenerationStream::Progress p = l.generation->progress();
    if (p.cached_tokens < 0) continue;  // queued: not in a slot yet
    const SamplingParams& s = l.sampling;
    // llama-server reports an unset seed as 2^32 - 1 (LLAMA_DEFAULT_SEED).
    json params = {{"n_predict", s.max_tokens},       {"seed", s.seed ? *s.seed : 4294967295u},
                   {"temperature", s.temperature},    {"top_k", s.top_k},
                   {"top_p", s.top_p},                {"presence_penalty", s.presence_penalty},
                   {"frequency_penalty", s.frequency_penalty}, {"max_tokens", s.max_tokens},
                   {"stream", l.stream},              {"n_probs", 0},
                   {"speculative.n_max", 0},          {"speculative.n_min", 0}};
    json next = {{"has_next_token", true},
                 {"has_new_line", false},
                 {"n_remain", s.max_tokens < 0 ? -1 : std::max<int64_t>(0, s.max_tokens - p.generated_tokens)},
                 {"n_decoded", p.generated_tokens}};
    out.push_back({{"id", static_cast<int>(out.size())},
                   {"id_task", id},
                   {"n_ctx", context_tokens},
                   {"speculative", false},
                   {"is_processing", true},
                   {"params", params},
                   {"next_token", next},
                   {"lineage", {{"path", l.path},
                                {"prompt_tokens", l.prompt_tokens},
                                {"cached_tokens", p.cached_tokens},
                                {"prefilled_tokens", p.prefilled_tokens}}}});
  }
  while (static_cast<int>(out.size()) < total_slots) {
    out.push_back({{"id", static_cast<int>(out.size())},
                   {"id_task", -1},
                   {"n_ctx", context_tokens},
                   {"speculative", false},
                   {"is_processing", false},
                   {"params", json::object()},
                   {"next_token", {{"has_next_token", false}, {"has_new_line", false}, {"n_remain", -1}, {"n_decoded", 0}}}});
  }
  return out;
}

}  // namespace lineage::server
