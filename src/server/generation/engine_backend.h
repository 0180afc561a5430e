// EngineBackend: the real Backend — a loaded model, its tokenizer and chat
// template, the lineage cache and the scheduler thread (DESIGN.md §2).
//
// Submit() runs on the caller's (connection) thread: it renders the chat
// template and tokenizes, so template errors and over-long prompts are
// refused with a 4xx before anything is queued; then it hands a Job to the
// scheduler. Everything after that is the scheduler's (scheduler.h).
//
// Ownership: owns the engine, the cache and the scheduler; shares the model.
// Thread-safety: Submit() and Stats() may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cache/disk/file_disk_tier.h"
#include "cache/lineage_cache.h"
#include "engine/engine.h"
#include "server/generation/backend.h"
#include "server/generation/chunk_reuse.h"
#include "server/kv_events/kv_events.h"
#include "server/generation/prompt_builder.h"
#include "server/generation/scheduler.h"

namespace lineage::server {

struct EngineBackendOptions {
  std::string model_id = "lineage";
  std::string model_path;            // /props
  std::string chat_template_source;  // /props
  SchedulerOptions scheduler;       // context_tokens 0: the model's context length
  cache::CacheOptions cache;
  engine::EngineOptions engine;
  // Disk tier: empty dir means RAM only. Entries written there by an earlier
  // run of the same model are served after a restart.
  std::string cache_dir;
  int64_t cache_disk_max_bytes = int64_t{1} << 40;
  bool cache_disk_shared = false;  // several servers share cache_dir (docs/disk-format.md)
  PromptBuilderOptions prompt;
  // Upper bound on every request's generated tokens (--n-predict); -1: none
  // (a request's own max_tokens, else the context, is the limit).
  int64_t max_predict_tokens = -1;
  // Chunk reuse (server/chunk_reuse.h): minimum run in tokens, 0 = off.
  // Attention-only models only: Create refuses it for a hybrid model.
  int64_t cache_reuse_min_tokens = 0;
  // Speculative decoding for requests that do not say (--spec-type,
  // --draft-max, --draft-min); a request may override each. On: prompt
  // lookup costs a scan per step and drafts only while drafts pay
  // (engine/speculation.h), and the tokens are those of plain decoding.
  engine::SpecOptions spec = [] {
    engine::SpecOptions o;
    o.type = engine::SpecType::kNgram;
    return o;
  }();
  // KV events (kv_events.h, docs/kv-events.md): empty endpoint means off.
  KvEventOptions kv_events;
};

// A request's max_tokens (-1: none) under the server's cap (-1: none).
int64_t CappedMaxTokens(int64_t requested, int64_t cap);

class EngineBackend : public Backend {
 public:
  // `chat_template` absent: /v1/chat/completions answers 400.
  static Result<std::unique_ptr<EngineBackend>> Create(std::shared_ptr<const model::Model> model,
                                                       text::Tokenizer tokenizer,
                                                       std::optional<ChatTemplate> chat_template,
                                                       EngineBackendOptions options);
  ~EngineBackend() override;

  std::string model_id() const override { return options_.model_id; }
  int64_t context_tokens() const override { return options_.scheduler.context_tokens; }
  Result<Submission> Submit(const ApiRequest& request) override;
  CacheStats Stats() const override;
  Result<int64_t> CountPromptTokens(const ApiRequest& request) override;
  BackendProps Props() const override;
  const text::Tokenizer* tokenizer() const override { return &tokenizer_; }
  Result<std::string> RenderPrompt(const ApiRequest& request) override;
  nlohmann::ordered_json Lineages() const override;

  cache::LineageCache& cache() { return *cache_; }

 private:
  EngineBackend(EngineBackendOptions options, std::unique_ptr<engine::Engine> engine,
                std::unique_ptr<cache::disk::FileDiskTier> disk, std::unique_ptr<PromptBuilder> builder,
                text::Tokenizer tokenizer);

  EngineBackendOptions options_;
  text::Tokenizer tokenizer_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<cache::disk::FileDiskTier> disk_;  // null: RAM only; outlives the cache
  std::unique_ptr<cache::LineageCache> cache_;
  std::unique_ptr<PromptBuilder> builder_;
  std::unique_ptr<ChunkReuse> reuse_;     // null when --cache-reuse is off
  std::unique_ptr<Scheduler> scheduler_;  // its thread uses the members above
  std::unique_ptr<KvEventPublisher> kv_events_;  // last: its thread reads the cache and the disk tier
  // The last Lineages() answer and the cache's state it describes.
  mutable std::mutex lineages_mu_;
  mutable nlohmann::ordered_json lineages_;
  mutable uint64_t lineages_version_ = 0;
  mutable bool lineages_valid_ = false;
};

}  // namespace lineage::server
