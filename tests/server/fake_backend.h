// FakeBackend: a scripted Backend for the HTTP layer's tests.
//
// Each Submit() records the request and answers with the next script (or the
// default one): a list of byte pieces pushed with a delay between them, then
// a finish reason. It honours Cancel() between pieces, as the real scheduler
// does between decode steps.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/generation/backend.h"

namespace lineage::server::testing {

struct Script {
  Script() = default;
  explicit Script(std::vector<std::string> p, FinishReason f = FinishReason::kEndOfSequence)
      : pieces(std::move(p)), finish(f) {}
  Script& Reasoning() {
    reasoning_open = true;
    return *this;
  }
  Script& Tokens(int64_t prompt, int64_t cached) {
    prompt_tokens = prompt;
    cached_tokens = cached;
    return *this;
  }

  std::vector<std::string> pieces;
  FinishReason finish = FinishReason::kEndOfSequence;
  std::chrono::milliseconds delay{0};  // before each piece
  int64_t prompt_tokens = 10;
  int64_t cached_tokens = 4;
  bool reasoning_open = false;
  Status submit_error;                 // returned by Submit when not ok
  int64_t prefill_step = 0;            // > 0: report prefill progress in steps of this many tokens
  std::chrono::milliseconds prefill_step_delay{0};
};

class FakeBackend : public Backend {
 public:
  ~FakeBackend() override {
    for (auto& t : threads_) t.join();
  }
  std::string model_id() const override { return "fake-model"; }
  int64_t context_tokens() const override { return 4096; }

  void Queue(Script s) {
    std::lock_guard<std::mutex> lock(mu_);
    scripts_.push_back(std::move(s));
  }
  // Consulted before the queue: a script chosen from the request itself.
  void SetResponder(std::function<std::optional<Script>(const ApiRequest&)> f) {
    std::lock_guard<std::mutex> lock(mu_);
    responder_ = std::move(f);
  }
  void SetDefault(Script s) {
    std::lock_guard<std::mutex> lock(mu_);
    default_ = std::move(s);
  }

  Result<Submission> Submit(const ApiRequest& request) override {
    Script s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      std::optional<Script> chosen = responder_ ? responder_(request) : std::nullopt;
      if (chosen) {
        s = std::move(*chosen);
      } else if (!scripts_.empty()) {
        s = std::move(scripts_.front());
        scripts_.pop_front();
      } else {
        s = default_;
      }
    }
    if (!s.submit_error.ok()) return s.submit_error;
    auto stream = std::make_shared<GenerationStream>();
    Submission sub{stream, s.prompt_tokens, s.reasoning_open};
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back([this, stream, s] {
      RequestReport r;
      r.prompt_tokens = s.prompt_tokens;
      r.cached_tokens = s.cached_tokens;
      r.restore_kind = s.cached_tokens > 0 ? "entry" : "none";
      r.restore_tier = s.cached_tokens > 0 ? "ram" : "none";
      r.first_token_us = 1000;
      stream->Admitted(s.cached_tokens);
      for (int64_t n = s.cached_tokens + s.prefill_step; s.prefill_step > 0 && n < s.prompt_tokens; n += s.prefill_step) {
        std::this_thread::sleep_for(s.prefill_step_delay);
        stream->Prefilled(n);
      }
      for (const std::string& piece : s.pieces) {
        std::this_thread::sleep_for(s.delay);
        if (stream->cancelled()) {
          ++cancelled_;
          stream->Close(FinishReason::kCancelled, r);
          return;
        }
        stream->PushText(piece, 1);
        ++r.completion_tokens;
      }
      stream->Close(s.finish, r, s.finish == FinishReason::kError ? Internal("scripted failure") : Status::Ok());
    });
    return sub;
  }

  CacheStats Stats() const override {
    CacheStats c;
    c.entries = 3;
    c.ram_bytes = 12345;
    c.evictions_ram = 2;
    return c;
  }

  std::vector<ApiRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int cancelled() const { return cancelled_.load(); }

 private:
  std::mutex mu_;
  std::deque<Script> scripts_;
  std::function<std::optional<Script>(const ApiRequest&)> responder_;
  Script default_{std::vector<std::string>{"Hello", ", ", "world"}};
  std::vector<ApiRequest> requests_;
  std::vector<std::thread> threads_;
  std::atomic<int> cancelled_{0};
};

}  // namespace lineage::server::testing
