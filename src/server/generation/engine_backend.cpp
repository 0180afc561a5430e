#include "server/generation/engine_backend.h"

#include <algorithm>
#include <random>

#include "engine/disk_codec.h"
#include "server/generation/cache_lineages.h"
#include "server/kv_events/restorable_view.h"

namespace lineage::server {

namespace {

// A number that changes when any of `counters` does: what the KV event
// publisher and the lineage list compare to tell that the cache moved.
uint64_t MixCounters(std::initializer_list<int64_t> counters) {
  uint64_t v = 0;
  for (int64_t x : counters) v = v * 1000003u ^ static_cast<uint64_t>(x);
  return v;
}

}  // namespace

int64_t CappedMaxTokens(int64_t requested, int64_t cap) {
  if (cap < 0) return requested;
  return requested < 0 ? cap : std::min(requested, cap);
}

Result<std::unique_ptr<EngineBackend>> EngineBackend::Create(std::shared_ptr<const model::Model> model,
                                                             text::Tokenizer tokenizer,
                                                             std::optional<ChatTemplate> chat_template,
                                                             EngineBackendOptions options) {
  int64_t model_context = model->config.context_length;
  if (options.scheduler.context_tokens <= 0 || (model_context > 0 && options.scheduler.context_tokens > model_context))
    options.scheduler.context_tokens = model_context > 0 ? model_context : 4096;
  options.cache.recurrent = model->config.num_linear_layers() > 0;
  // The exchange rate of structural checkpoints (CacheOptions::structural_block_tokens).
  options.cache.state_bytes = model->config.recurrent_bytes();
  options.cache.kv_bytes_per_token = model->config.kv_bytes_per_token();
  if (options.cache_reuse_min_tokens > 0 && options.cache.recurrent)
    return InvalidArgument("chunk reuse needs an attention-only model: a recurrent state cannot be spliced");
  LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine, engine::Engine::Create(model, options.engine));
  std::unique_ptr<cache::disk::FileDiskTier> disk;
  if (!options.cache_dir.empty()) {
    cache::disk::FileDiskTierOptions d;
    d.dir = options.cache_dir;
    d.cap_bytes = options.cache_disk_max_bytes;
    d.shared = options.cache_disk_shared;
    auto tier = cache::disk::FileDiskTier::Open(d, engine::EngineDiskCodec::For(*engine));
    if (!tier.ok()) return tier.status().With("disk tier " + options.cache_dir);
    disk = std::move(*tier);
  }
  auto builder = std::make_unique<PromptBuilder>(tokenizer, std::move(chat_template), options.prompt);
  const KvEventOptions kv_events = options.kv_events;
  std::unique_ptr<EngineBackend> backend(new EngineBackend(std::move(options), std::move(engine), std::move(disk),
                                                           std::move(builder), std::move(tokenizer)));
  if (!kv_events.endpoint.empty()) {
    cache::LineageCache* cache = backend->cache_.get();
    cache::disk::FileDiskTier* tier = backend->disk_.get();
    LINEAGE_ASSIGN_OR_RETURN(backend->kv_events_,
                             KvEventPublisher::Create(kv_events, [cache, tier] { return RestorablePrefixes(*cache, tier); }));
    // Any commit, extension, eviction or disk rescan moves one of these.
    backend->kv_events_->Start([cache] {
      const cache::CacheStats s = cache->Stats();
      return MixCounters({s.entries, s.checkpoints, s.ram_bytes, s.evictions, s.absorptions, s.disk.entries,
                          s.disk.bytes, s.disk.evictions});
    });
  }
  return backend;
}

EngineBackend::EngineBackend(EngineBackendOptions options, std::unique_ptr<engine::Engine> engine,
                             std::unique_ptr<cache::disk::FileDiskTier> disk, std::unique_ptr<PromptBuilder> builder,
                             text::Tokenizer tokenizer)
    : options_(std::move(options)),
      tokenizer_(tokenizer),
      engine_(std::move(engine)),
      disk_(std::move(disk)),
      cache_(std::make_unique<cache::LineageCache>(options_.cache, disk_.get())),
      builder_(std::move(builder)) {
  if (options_.cache_reuse_min_tokens > 0) {
    reuse_ = std::make_unique<ChunkReuse>(engine_->config(), cache_.get(), options_.cache_reuse_min_tokens);
    options_.scheduler.after_admit = [r = reuse_.get()](std::span<const int32_t> prompt,
                                                        const cache::LookupResult& lookup, engine::Sequence& seq) {
      return r->Apply(prompt, lookup, seq);
    };
  }
  scheduler_ = std::make_unique<Scheduler>(engine_.get(), cache_.get(), std::move(tokenizer), options_.scheduler);
}

EngineBackend::~EngineBackend() { scheduler_.reset(); }

Result<Submission> EngineBackend::Submit(const ApiRequest& request) {
  // Tokenizing stops past the context: an oversized prompt costs no more
  // than a context's worth of encoding before its 400.
  LINEAGE_ASSIGN_OR_RETURN(BuiltPrompt prompt, builder_->Build(request, options_.scheduler.context_tokens));
  int64_t m = static_cast<int64_t>(prompt.tokens.size());
  if (m >= options_.scheduler.context_tokens)
    return OutOfRange("the prompt has " + std::to_string(m) + " tokens; the context holds " +
                      std::to_string(options_.scheduler.context_tokens));
  Job job;
  job.prompt = std::move(prompt.tokens);
  job.hints.anchor_tokens = std::min(prompt.anchor_tokens, m);
  job.hints.history_end_tokens = std::min(prompt.history_end_tokens, m);
  job.hints.system_end_tokens = std::min(prompt.system_end_tokens, job.hints.anchor_tokens);
  if (trace::TraceLog* log = options_.scheduler.trace_log) log->NoteSubmitted(job.prompt, job.hints.history_end_tokens);
  job.sampling.temperature = request.sampling.temperature;
  job.sampling.top_k = request.sampling.top_k;
  job.sampling.top_p = request.sampling.top_p;
  job.sampling.seed = request.sampling.seed ? *request.sampling.seed : std::random_device{}();
  for (const auto& [id, bias] : request.sampling.logit_bias)
    if (id >= engine_->config().vocab)
      return InvalidArgument("'logit_bias' names token " + std::to_string(id) + "; the vocabulary has " +
                             std::to_string(engine_->config().vocab) + " tokens");
  job.adjust = {request.sampling.logit_bias, request.sampling.frequency_penalty, request.sampling.presence_penalty};
  job.max_tokens = CappedMaxTokens(request.sampling.max_tokens, options_.max_predict_tokens);
  job.top_logprobs = request.sampling.top_logprobs;
  job.spec = options_.spec;
  if (request.sampling.spec_type) {
    Result<engine::SpecType> type = engine::ParseSpecType(*request.sampling.spec_type);
    if (!type.ok()) return InvalidArgument("'speculative.type': " + type.status().message());
    if (*type == engine::SpecType::kMtp && !engine_->mtp())
      return InvalidArgument("'speculative.type': draft-mtp needs a model file with an MTP block, served with "
                             "--spec-type draft-mtp");
    job.spec.type = *type;
  }
  if (request.sampling.spec_draft_max) job.spec.draft_max = *request.sampling.spec_draft_max;
  if (request.sampling.spec_draft_min) job.spec.draft_min = *request.sampling.spec_draft_min;
  if (!request.billing_header.empty())
    job.notes = options_.prompt.keep_billing_header ? "billing_header=kept" : "billing_header=stripped";
  LINEAGE_ASSIGN_OR_RETURN(job.grammar, ReplyGrammarForRequest(request, prompt.text, prompt.reasoning_open));
  job.stream = std::make_shared<GenerationStream>();
  Submission sub{job.stream, m, prompt.reasoning_open, job.hints.anchor_tokens};
  LINEAGE_RETURN_IF_ERROR(scheduler_->Enqueue(std::move(job)));
  return sub;
}

Result<int64_t> EngineBackend::CountPromptTokens(const ApiRequest& request) {
  LINEAGE_ASSIGN_OR_RETURN(BuiltPrompt prompt, builder_->Build(request));
  return static_cast<int64_t>(prompt.tokens.size());
}

Result<std::string> EngineBackend::RenderPrompt(const ApiRequest& request) {
  LINEAGE_ASSIGN_OR_RETURN(BuiltPrompt prompt, builder_->Build(request));
  return std::move(prompt.text);
}

BackendProps EngineBackend::Props() const {
  BackendProps p;
  p.model_path = options_.model_path;
  p.chat_template = options_.chat_template_source;
  p.bos_token = tokenizer_.TokenText(tokenizer_.bos_id());
  p.eos_token = tokenizer_.TokenText(tokenizer_.eos_id());
  p.total_slots = options_.scheduler.max_live;
  return p;
}

nlohmann::ordered_json EngineBackend::Lineages() const {
  // A page polls this every second; while nothing in either tier moved
  // (the counters below move with every lookup, commit, extension,
  // eviction, trim and disk write), the last answer stands and no token
  // sequence is copied again.
  const cache::CacheStats s = cache_->Stats();
  const uint64_t version = MixCounters({s.entries, s.checkpoints, s.ram_bytes, s.evictions, s.absorptions, s.thinned, s.trimmed,
                    s.lookups, s.live_leases, s.disk.entries, s.disk.bytes, s.disk.evictions, s.disk.bytes_written,
                    s.disk.bytes_read});
  std::lock_guard<std::mutex> lock(lineages_mu_);
  if (!lineages_valid_ || version != lineages_version_) {
    lineages_ = DescribeLineages(*cache_, disk_.get());
    lineages_version_ = version;
    lineages_valid_ = true;
  }
  return lineages_;
}

CacheStats EngineBackend::Stats() const {
  cache::CacheStats s = cache_->Stats();
  CacheStats c;
  c.entries = s.entries;
  c.checkpoints = s.checkpoints;
  c.anchors = s.anchors;
  c.ram_bytes = s.ram_bytes;
  c.ram_budget_bytes = s.ram_budget_bytes;
  c.disk_bytes = s.disk.bytes;
  c.disk_budget_bytes = s.disk.budget_bytes;
  c.absorptions = s.absorptions;
  c.evictions_ram = s.evictions;
  c.evictions_disk = s.disk.evictions;
  c.sequences_live = scheduler_->sequences_live();
  c.extra = {{"kv_bytes", s.kv_bytes},           {"recurrent_bytes", s.recurrent_bytes},
             {"anchor_bytes", s.anchor_bytes},   {"peak_ram_bytes", s.peak_ram_bytes},
             {"live_leases", s.live_leases},     {"thinned", s.thinned},
             {"trimmed", s.trimmed},
             {"lookups", s.lookups},             {"restored_tokens", s.restored_tokens},
             {"disk_restores", s.disk_restores}, {"mode", cache_->options().mode == cache::CacheMode::kLineage ? "lineage" : "exact"}};
  if (disk_) {
    // Writes run behind the requests: an entry is restorable from disk once
    // its write is done.
    const cache::disk::FileTierCounters d = disk_->Counters();
    c.extra["disk_pending_writes"] = d.pending_writes;
    c.extra["disk_dropped_writes"] = d.dropped_writes;
    c.extra["disk_superseded_writes"] = d.superseded_writes;
    c.extra["disk_failed_writes"] = d.failed_writes;
  }
  return c;
}

}  // namespace lineage::server
