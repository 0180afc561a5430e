// Backend: what the HTTP layer needs from whatever produces tokens.
//
// The HTTP layer parses a request, calls Submit() and then pulls the output
// from the returned GenerationStream on its own connection thread; the
// backend pushes text from its own thread(s). The real backend renders the
// chat template, tokenizes, consults the lineage cache and schedules the
// sequence for batched decoding; tests use a scripted fake.
//
// Ownership: the stream is shared by both sides (shared_ptr); either may
// outlive the other. A client that disconnects calls Cancel(); the backend
// notices (cancelled()), frees the sequence and closes the stream.
// Thread-safety: Backend methods may be called from many connection threads
// at once. GenerationStream is a thread-safe single-producer queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/api/api_request.h"

namespace lineage::text {
class Tokenizer;
}

namespace lineage::server {

enum class FinishReason {
  kEndOfSequence,  // the model emitted an end token
  kLength,         // max_tokens or the context ran out
  kCancelled,      // the client went away or stopped the stream (stop string)
  kError,
};

// Per-request figures the backend reports when the request ends; they feed
// /metrics, the request log and `usage`.
struct RequestReport {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;       // the restore length r plus reused_tokens
  int64_t reused_tokens = 0;       // of those, rows shifted into place by chunk reuse (--cache-reuse)
  int64_t completion_tokens = 0;
  int64_t draft_tokens = 0;           // drafts verified (speculative decoding)
  int64_t draft_accepted = 0;         // of those, taken: completion tokens that cost no step of their own
  std::string restore_kind = "none";  // none | entry | checkpoint kind (guard, anchor, ...)
  std::string restore_tier = "none";  // none | ram | disk
  int64_t closest_tokens = -1;        // on a miss: tokens shared with the closest stored sequence
  int64_t captures = 0;               // checkpoints captured during prefill
  int64_t admission_us = 0;
  int64_t prefill_us = 0;
  int64_t commit_us = 0;
  int64_t first_token_us = -1;        // from submit; -1 when no token came
  int64_t total_us = 0;
  std::string cache_detail;           // the cache's own account of lookup and commit
  std::string notes;                  // what the server changed in the request ("billing_header=stripped")
  int64_t choices = 1;                // OpenAI `n`: the choices this report covers (MergeChoiceReports)
};

// One generated token's log-probability and its most likely alternatives'
// (requests with logprobs), with their bytes.
struct TokenLogprob {
  struct Candidate {
    int32_t id = 0;
    std::string bytes;
    float logprob = 0;
  };
  Candidate token;
  std::vector<Candidate> top;  // most likely first
};

// One item pulled from a stream: text, or the end with its report.
struct GenerationItem {
  int64_t cached_tokens = -1;    // the restore length once admitted; -1 before
  int64_t prefilled_tokens = 0;  // prompt tokens in the sequence so far (progress)
  std::string text;              // raw bytes from the detokenizer (maybe not UTF-8)
  int64_t num_tokens = 0;        // tokens behind `text`
  // `text` as it was pushed, in order: bytes and tokens of each push (their
  // sums are text.size() and num_tokens), so that a consumer can tell which
  // tokens produced which text.
  struct Piece {
    size_t bytes = 0;
    int64_t tokens = 0;
  };
  std::vector<Piece> pieces;
  std::vector<TokenLogprob> logprobs;  // of the tokens pushed with one, in order
  bool done = false;
  FinishReason finish = FinishReason::kEndOfSequence;
  Status error;                  // when finish == kError
  RequestReport report;          // when done
};

class GenerationStream {
 public:
  // Producer side. Admitted() comes before the first PushText().
  void Admitted(int64_t cached_tokens);
  // Prefill progress: the sequence holds `prefilled_tokens` of the prompt.
  // Read by the consumer at its next Pull; wakes nobody.
  void Prefilled(int64_t prefilled_tokens);
  void PushText(std::string text, int64_t num_tokens, std::optional<TokenLogprob> logprob = std::nullopt);
  void Close(FinishReason finish, RequestReport report, Status error = Status::Ok());

  // Consumer side: waits up to `timeout` for anything new and returns
  // everything pushed so far (texts concatenated); `*got` is false on timeout. Once `done` has been
  // returned, later calls return done again.
  GenerationItem Pull(std::chrono::milliseconds timeout, bool* got);
  void Cancel();

  bool cancelled() const;

  // Where the generation stands, for observers (the cache page, /slots);
  // consumes nothing.
  struct Progress {
    int64_t cached_tokens = -1;  // -1: not admitted yet
    int64_t prefilled_tokens = 0;
    int64_t generated_tokens = 0;
  };
  Progress progress() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t cached_tokens_ = -1;
  int64_t prefilled_tokens_ = 0;
  bool admitted_news_ = false;  // Admitted() not yet seen by Pull()
  std::string text_;
  int64_t num_tokens_ = 0;
  int64_t generated_tokens_ = 0;  // every token pushed, pulled or not
  std::vector<GenerationItem::Piece> pieces_;
  std::vector<TokenLogprob> logprobs_;
  bool closed_ = false;
  bool cancelled_ = false;
  GenerationItem final_;
};

// What Submit() knows before any token is computed.
struct Submission {
  std::shared_ptr<GenerationStream> stream;
  int64_t prompt_tokens = 0;
  bool reasoning_open = false;  // the rendered prompt ends inside <think>
  // Tokens of the leading system + tools prefix the cache anchors (0: none);
  // sent as X-Lineage-Anchor-Tokens for proxies (deploy/README.md).
  int64_t anchor_tokens = 0;
};

// Cumulative state of the cache for /metrics and /v1/cache/stats.
struct CacheStats {
  int64_t entries = 0;
  int64_t checkpoints = 0;
  int64_t anchors = 0;
  int64_t ram_bytes = 0;
  int64_t ram_budget_bytes = 0;
  int64_t disk_bytes = 0;
  int64_t disk_budget_bytes = 0;
  int64_t absorptions = 0;
  int64_t evictions_ram = 0;
  int64_t evictions_disk = 0;
  // Sequences the backend is running or holding to resume (every choice of
  // every request); 0 once all have ended.
  int64_t sequences_live = 0;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // backend-specific detail for /v1/cache/stats
};

// What /props reports about the served model (llama-server's fields).
struct BackendProps {
  std::string model_path;
  std::string chat_template;  // the template's source; empty: none
  std::string bos_token;
  std::string eos_token;
  int total_slots = 1;        // sequences decoded at once (--parallel)
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The model name reported by /v1/models and in responses.
  virtual std::string model_id() const = 0;
  virtual int64_t context_tokens() const = 0;

  // Starts a generation. Errors: kInvalidArgument / kOutOfRange for a request
  // the model cannot take (template error, prompt longer than the context);
  // kResourceExhausted when the queue is full (503, retry later).
  virtual Result<Submission> Submit(const ApiRequest& request) = 0;

  virtual CacheStats Stats() const = 0;

  // Prompt tokens the request would take (Anthropic's count_tokens), without
  // running it. Same errors as Submit's rendering.
  virtual Result<int64_t> CountPromptTokens(const ApiRequest& request) {
    return Unsupported("token counting is not available");
  }

  virtual BackendProps Props() const { return {}; }
  // The vocabulary for /tokenize and /detokenize; null: none.
  virtual const text::Tokenizer* tokenizer() const { return nullptr; }
  // The prompt text a chat request renders to (/apply-template). Same errors
  // as Submit's rendering.
  virtual Result<std::string> RenderPrompt(const ApiRequest& request) {
    return Unsupported("prompt rendering is not available");
  }
  // The stored lineages as /v1/cache/lineages lists them (docs/cache-page.md).
  virtual nlohmann::ordered_json Lineages() const { return nlohmann::ordered_json::array(); }
};

}  // namespace lineage::server
