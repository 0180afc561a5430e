#include "engine/engine.h"

#include <algorithm>
#include <string>

#include "core/kernels.h"
#include "core/prefill_steps.h"
#include "engine/forward.h"
#include "engine/layers.h"
#include "engine/sampler.h"

#include <xmmintrin.h>

namespace lineage::engine {
namespace {

// Flush-to-zero and denormals-are-zero for the calling thread. Decays of the
// delta rule (exp of sums of log-decays over a chunk) reach the denormal
// range on strongly decaying heads, where every multiply is ~100x slower;
// values below 1e-38 are zero for every purpose here.
constexpr unsigned kFtzDaz = 0x8040;  // MXCSR bits 15 (FTZ) and 6 (DAZ)

class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtzDaz); }
  ~ScopedFlushDenormals() { _mm_setcsr(saved_); }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned saved_;
};

// True when an element before i names the sequence element i names: a
// step runs each sequence once.
template <typename T, typename SeqOf>
bool SeenBefore(std::span<const T> items, size_t i, SeqOf seq_of) {
  for (size_t j = 0; j < i; ++j)
    if (seq_of(items[j]) == seq_of(items[i])) return true;
  return false;
}

}  // namespace

Engine::Engine(std::shared_ptr<const model::Model> model, const EngineOptions& options)
    : model_(std::move(model)), options_(options) {
  const model::ModelConfig& c = model_->config;
  kv_layout_.num_layers = c.num_full_layers();
  kv_layout_.num_kv_heads = c.num_kv_heads;
  kv_layout_.head_dim = c.head_dim;
  if (c.latent()) {  // one latent row per token: its halves in K and V (docs/engine.md)
    kv_layout_.num_kv_heads = 1;
    kv_layout_.head_dim = c.mla.latent_dim() / 2;
  }
  for (int64_t l = 0; l < c.num_layers; ++l) {  // blocks beside the KV rows (the sparse kind's indexer keys)
    const int64_t side = model::SideFloats(c, l);
    if (side == 0) continue;
    ++kv_layout_.index_layers;
    kv_layout_.index_dim = side;
  }
  if (options.mtp) ++kv_layout_.num_layers;  // the MTP block's, after the trunk's
  kv_layout_.page_tokens = options.page_tokens;
  kv_layout_.dtype = options.kv_dtype;
  rec_layout_ = RecurrentLayout::For(c);
  // The workers run only this engine's kernels: flush denormals there for
  // good, from their first instruction; the calling thread does it per step.
  pool_ = std::make_unique<ThreadPool>(std::max(1, options.num_threads),
                                       [] { _mm_setcsr(_mm_getcsr() | kFtzDaz); });
}

Result<std::unique_ptr<Engine>> Engine::Create(std::shared_ptr<const model::Model> model,
                                               const EngineOptions& options) {
  if (model == nullptr) return InvalidArgument("no model");
  const model::ModelConfig& c = model->config;
  if (static_cast<int64_t>(model->weights.layers.size()) != c.num_layers ||
      static_cast<int64_t>(c.layers.size()) != c.num_layers) {
    return Internal("model has " + std::to_string(model->weights.layers.size()) + " bound layers, config says " +
                    std::to_string(c.num_layers));
  }
  if (c.arch == model::Arch::kQwen3 && c.num_linear_layers() != 0) {
    return Unsupported("qwen3 model with linear-attention layers");
  }
  if (c.moe()) {
    if ((!model::IsHybrid(c.arch) && !c.latent()) || c.experts.per_token <= 0 || c.experts.per_token > c.experts.count) {
      return Unsupported("MoE FFN needs a hybrid arch and 0 < experts per token <= experts");
    }
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const model::LayerWeights& l = model->weights.layers[i];
      if (c.moe_layer(i) && (static_cast<int64_t>(l.moe.gate.size()) != c.experts.count || !l.moe.router.valid())) {
        return Internal("MoE model with unbound experts");
      }
    }
  }
  if (c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
    return Unsupported("query heads must be a multiple of kv heads");
  }
  if (c.num_linear_layers() > 0 && (c.delta.k_heads <= 0 || c.delta.v_heads % c.delta.k_heads != 0)) {
    return Unsupported("GDN value heads must be a multiple of key heads");
  }
  if (c.head_dim <= 0 || c.head_dim % 8 != 0) return Unsupported("attention head_dim must be a multiple of 8");
  if (c.rope_dims <= 0 || c.rope_dims % 2 != 0 || c.rope_dims > c.head_dim) {
    return Unsupported("rotary dims must be even and at most head_dim");
  }
  if (options.kv_dtype != DType::kF32 && options.kv_dtype != DType::kBF16) {
    return Unsupported("KV pages hold f32 or bf16");
  }
  if (options.mtp && !model->weights.mtp.valid()) {  // bound only where config.mtp()
    std::string why = model->weights.mtp_unavailable.empty() ? "" : " (" + model->weights.mtp_unavailable + ")";
    return Unsupported("the model file has no multi-token-prediction (NextN) block to draft with" + why);
  }
  if (options.page_tokens <= 0 || options.prefill_chunk_tokens <= 0) {
    return InvalidArgument("page and chunk sizes must be positive");
  }
  return std::unique_ptr<Engine>(new Engine(std::move(model), options));
}

Result<Sequence> Engine::Admit(const cache::KvView& kv, const cache::RecurrentBlob* recurrent) const {
  return Sequence::FromSnapshot(kv_layout_, rec_layout_, kv, recurrent);
}

Result<Sequence> Engine::AdmitCheckpoint(const cache::RecurrentBlob* recurrent, int64_t n,
                                         const cache::KvView& longer) const {
  return Sequence::FromCheckpoint(kv_layout_, rec_layout_, recurrent, n, longer);
}

Status Engine::CheckTokens(const Sequence& seq, std::span<const int32_t> tokens) const {
  const int64_t vocab = config().vocab;
  for (int32_t t : tokens) {
    if (t < 0 || t >= vocab) {
      return InvalidArgument("token id " + std::to_string(t) + " outside the vocabulary [0, " +
                             std::to_string(vocab) + ")");
    }
  }
  const int64_t end = seq.num_tokens() + static_cast<int64_t>(tokens.size());
  if (config().context_length > 0 && end > config().context_length) {
    return OutOfRange("sequence of " + std::to_string(end) + " tokens exceeds the context length " +
                      std::to_string(config().context_length));
  }
  return Status::Ok();
}

void Engine::Step(const Batch& batch, float* logits) {
  const ScopedFlushDenormals flush;
  ws_.Ensure(config(), batch.num_rows);
  for (const Segment& s : batch.segments) {
    s.seq->kv().Reserve(s.num_tokens);
    s.seq->OwnRecurrent();  // before the threads write it (copy-on-write of a shared state)
  }
  const StepContext ctx{config(),          batch, ws_, pool_.get(), options_.delta_chunked_min_tokens,
                        options_.latent_path, options_.mtp};
  Forward(*model_, ctx, logits);
  for (const Segment& s : batch.segments) s.seq->kv().Commit(s.num_tokens);
}

Status Engine::Prefill(Sequence& seq, std::span<const int32_t> tokens, const PrefillOptions& options,
                       PrefillResult* result) {
  if (tokens.empty()) return InvalidArgument("prefill of zero tokens");
  LINEAGE_RETURN_IF_ERROR(CheckTokens(seq, tokens));
  const int64_t start = seq.num_tokens();
  const int64_t end = start + static_cast<int64_t>(tokens.size());
  std::vector<int64_t> captures(options.capture_at.begin(), options.capture_at.end());
  std::sort(captures.begin(), captures.end());
  captures.erase(std::unique(captures.begin(), captures.end()), captures.end());
  for (int64_t c : captures) {
    if (c <= start || c > end) {
      return InvalidArgument("capture point " + std::to_string(c) + " outside the prefill range (" +
                             std::to_string(start) + ", " + std::to_string(end) + "]");
    }
  }
  const int64_t chunk = options.chunk_tokens > 0 ? options.chunk_tokens : options_.prefill_chunk_tokens;
  result->captures.clear();
  result->logits.assign(static_cast<size_t>(config().vocab), 0.0f);
  // Captures do not end a step: the recurrent layers write the state at each
  // one inside it (Segment::captures). Ending a step there cost each capture
  // a pass over every weight (a 12-layer Q8_0 model: 11 tokens 65 ms, 14
  // tokens 100 ms, against 220 ms for 256), two or three per warm turn.
  auto next_capture = captures.begin();
  std::vector<int64_t> offsets;
  std::vector<std::shared_ptr<RecurrentState>> states;
  while (seq.num_tokens() < end) {
    const int64_t pos = seq.num_tokens();
    const int64_t stop = PrefillStepEnd(pos, end, chunk);
    offsets.clear();
    states.clear();
    for (; next_capture != captures.end() && *next_capture <= stop; ++next_capture) {
      offsets.push_back(*next_capture - pos);
      if (rec_layout_.num_layers > 0) states.push_back(std::make_shared<RecurrentState>(rec_layout_));
    }
    Batch batch;
    batch.Add(&seq, tokens.data() + (pos - start), stop - pos);
    if (!states.empty()) {
      batch.segments.back().capture_offsets = offsets;
      batch.segments.back().captures = states;
    }
    Step(batch, stop == end ? result->logits.data() : nullptr);
    for (size_t i = 0; i < offsets.size(); ++i)
      result->captures.push_back({pos + offsets[i], states.empty() ? nullptr : states[i]});
  }
  return Status::Ok();
}

Status Engine::Decode(std::span<Sequence* const> seqs, std::span<const int32_t> tokens, std::vector<float>* logits) {
  if (seqs.size() != tokens.size()) return InvalidArgument("one token per sequence");
  if (seqs.empty()) return InvalidArgument("decode of no sequences");
  Batch batch;
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (SeenBefore(seqs, i, [](Sequence* s) { return s; }))
      return InvalidArgument("a sequence appears twice in one decode step");
    LINEAGE_RETURN_IF_ERROR(CheckTokens(*seqs[i], tokens.subspan(i, 1)));
    batch.Add(seqs[i], &tokens[i], 1);
  }
  // Every value is written by the head; resize, not assign: zeroing a 248k
  // vocabulary first was ~1% of a decode step.
  logits->resize(seqs.size() * static_cast<size_t>(config().vocab));
  Step(batch, logits->data());
  return Status::Ok();
}

Status Engine::Verify(std::span<const VerifyRun> runs, std::vector<float>* logits) {
  if (runs.empty()) return InvalidArgument("verification of no sequences");
  for (const VerifyRun& r : runs) {
    if (r.rollback != nullptr) r.rollback->tokens = 0;  // until this step has logged its run
  }
  Batch batch;
  std::vector<RollbackTarget> targets;
  targets.reserve(runs.size());  // segments point at them
  std::vector<std::pair<size_t, int64_t>> logged;  // run, its sequence's length before the step
  for (size_t i = 0; i < runs.size(); ++i) {
    const VerifyRun& r = runs[i];
    if (r.seq == nullptr || r.tokens.empty()) return InvalidArgument("a verification run without tokens");
    if (SeenBefore(runs, i, [](const VerifyRun& v) { return v.seq; }))
      return InvalidArgument("a sequence appears twice in one verification step");
    LINEAGE_RETURN_IF_ERROR(CheckTokens(*r.seq, r.tokens));
    const int64_t n = static_cast<int64_t>(r.tokens.size());
    batch.Add(r.seq, r.tokens.data(), n);
    batch.segments.back().logits_every_row = true;
    batch.segments.back().rows_as_decode = true;
    if (rec_layout_.num_layers == 0 || n == 1) continue;
    if (r.rollback == nullptr) return InvalidArgument("a verification run of a recurrent model needs a rollback log");
    RollbackLog& log = *r.rollback;
    // A buffer a snapshot or the sequence still holds must not be written.
    if (log.before == nullptr || log.before.use_count() > 1) log.before = std::make_shared<RecurrentState>(rec_layout_);
    // The conv windows slide in the sequence's state: the spare buffer
    // keeps them as they were, and the two trade places after the step.
    const RecurrentState& before = r.seq->recurrent();
    for (int64_t l = 0; l < rec_layout_.num_layers; ++l)
      std::copy(before.conv(l), before.conv(l) + rec_layout_.conv_floats(), log.before->conv(l));
    log.values.resize(static_cast<size_t>(RollbackTarget::Floats(rec_layout_, n)));
    logged.emplace_back(i, r.seq->num_tokens());
    targets.push_back({log.before.get(), log.values.data(), rec_layout_, n});
    batch.segments.back().rollback = &targets.back();
  }
  logits->resize(static_cast<size_t>(batch.num_rows) * static_cast<size_t>(config().vocab));
  Step(batch, logits->data());
  for (const auto& [i, start] : logged) {
    const VerifyRun& r = runs[i];
    RollbackLog& log = *r.rollback;
    log.start = start;
    log.tokens = static_cast<int64_t>(r.tokens.size());
    RecurrentState& seq_state = r.seq->recurrent();
    for (int64_t l = 0; l < rec_layout_.num_layers; ++l)
      std::swap_ranges(seq_state.conv(l), seq_state.conv(l) + rec_layout_.conv_floats(), log.before->conv(l));
    r.seq->Rewind(r.seq->num_tokens(), &log.before);  // the state after the run becomes the sequence's
  }
  return Status::Ok();
}

void Engine::RollBack(Sequence& seq, int64_t length, RollbackLog& log) {
  const int64_t keep = length - log.start;
  if (rec_layout_.num_layers == 0 || log.tokens == 0 || keep >= log.tokens) {
    seq.Rewind(length, nullptr);  // nothing to replay, or the whole run kept
    return;
  }
  seq.Rewind(length, &log.before);  // the sequence's state: the one before the step
  RecurrentState& s = seq.recurrent();
  const RecurrentLayout& l = rec_layout_;
  const RollbackTarget t{nullptr, log.values.data(), l, log.tokens};
  pool_->parallel_for(l.num_layers * l.num_v_heads, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t layer = i / l.num_v_heads, h = i % l.num_v_heads;
      kernels::DeltaRuleReplay(t.head(layer, h), keep, l.k_dim, l.v_dim, s.delta(layer) + h * l.k_dim * l.v_dim);
    }
  });
  // Each conv window slides by the kept tokens' raw rows (row r reads row
  // r + keep of the old window, or a raw row: never one already written).
  for (int64_t layer = 0; layer < l.num_layers; ++layer) {
    float* window = s.conv(layer);
    for (int64_t r = 0; r < l.conv_rows; ++r) {
      const int64_t from = keep - l.conv_rows + r;  // relative to the run
      const float* src = from >= 0 ? t.raw(layer) + from * l.conv_dim : window + (l.conv_rows + from) * l.conv_dim;
      if (src != window + r * l.conv_dim) std::copy(src, src + l.conv_dim, window + r * l.conv_dim);
    }
  }
}

Status Engine::DraftMtp(std::span<const MtpDraftRun> runs) {
  if (!options_.mtp) return InvalidArgument("MTP drafts need an engine with the MTP block on");
  const ScopedFlushDenormals flush;
  const int64_t H = config().hidden, V = config().vocab;
  std::vector<int64_t> start(runs.size());
  std::vector<int32_t> token(runs.size());
  std::vector<std::vector<float>> state(runs.size());  // the block's output state of the last depth
  int64_t depth_max = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const MtpDraftRun& r = runs[i];
    if (r.seq == nullptr || r.drafts == nullptr || r.count < 0) return InvalidArgument("a malformed MTP draft run");
    if (SeenBefore(runs, i, [](const MtpDraftRun& m) { return m.seq; }))
      return InvalidArgument("a sequence appears twice in one MTP draft pass");
    LINEAGE_RETURN_IF_ERROR(CheckTokens(*r.seq, std::span(&r.token, 1)));
    if (config().context_length > 0 && r.seq->num_tokens() + r.count > config().context_length) {
      return OutOfRange("MTP drafts past the context length");
    }
    start[i] = r.seq->num_tokens();
    token[i] = r.token;
    r.drafts->clear();
    depth_max = std::max(depth_max, r.count);
  }
  std::vector<const float*> h;
  for (int64_t d = 0; d < depth_max; ++d) {
    Batch batch;
    h.clear();
    std::vector<size_t> in_batch;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].count <= d) continue;
      batch.Add(runs[i].seq, &token[i], 1);
      h.push_back(d == 0 ? runs[i].seq->Hidden(start[i] - 1) : state[i].data());
      in_batch.push_back(i);
    }
    ws_.Ensure(config(), batch.num_rows);
    for (const Segment& s : batch.segments) s.seq->kv().Reserve(1);
    const StepContext ctx{config(), batch, ws_, pool_.get(), options_.delta_chunked_min_tokens, options_.latent_path,
                          false};
    draft_logits_.resize(static_cast<size_t>(batch.num_rows * V));
    DraftMtpRows(*model_, ctx, h, draft_logits_.data());
    for (size_t b = 0; b < in_batch.size(); ++b) {
      const size_t i = in_batch[b];
      token[i] = Argmax(std::span<const float>(draft_logits_).subspan(b * static_cast<size_t>(V), static_cast<size_t>(V)));
      runs[i].drafts->push_back(token[i]);
      const float* out = ws_.mtp_h.data() + static_cast<int64_t>(b) * H;
      state[i].assign(out, out + H);
      runs[i].seq->kv().Commit(1);
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) runs[i].seq->kv().Truncate(start[i]);
  return Status::Ok();
}

}  // namespace lineage::engine
