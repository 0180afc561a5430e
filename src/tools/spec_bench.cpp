#include "tools/spec_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>

#include "core/clock.h"
#include "engine/sampler.h"
#include "engine/speculation.h"
#include "tools/bench_workload.h"

namespace lineage::engine {
namespace {

using Clock = std::chrono::steady_clock;

struct RunResult {
  std::vector<int32_t> tokens;
  double seconds = 0;
  double draft_cost = 0;  // the MTP drafts' share of a decode step, as StepCosts learnt it
  int64_t proposed = 0, accepted = 0, rounds = 0;
  double experts_per_layer = 0;
};

double ExpertsPerLayer(const Engine::ExpertCounts& a, const Engine::ExpertCounts& b) {
  const int64_t passes = b.layer_passes - a.layer_passes;
  return passes > 0 ? static_cast<double>(b.experts_run - a.experts_run) / static_cast<double>(passes) : 0.0;
}

// Greedy decode of n tokens from the snapshot, the first token given.
Result<RunResult> Plain(Engine& engine, const Snapshot& start, int32_t first, int64_t n) {
  LINEAGE_ASSIGN_OR_RETURN(Sequence seq, engine.Admit(*start.kv, start.recurrent.get()));
  RunResult r;
  r.tokens.push_back(first);
  std::vector<float> logits;
  const Engine::ExpertCounts e0 = engine.expert_counts();
  const auto t0 = Clock::now();
  while (static_cast<int64_t>(r.tokens.size()) <= n) {
    Sequence* one[] = {&seq};
    LINEAGE_RETURN_IF_ERROR(engine.Decode(one, std::span(&r.tokens.back(), 1), &logits));
    r.tokens.push_back(Argmax(logits));
  }
  r.seconds = SecondsBetween(t0, Clock::now());
  r.experts_per_layer = ExpertsPerLayer(e0, engine.expert_counts());
  return r;
}

// Where a drafted run's drafts come from.
enum class DraftSource {
  kRecord,      // the record, each wrong with chance 1 - rate
  kRecordPaid,  // the same, after an MTP drafting pass of as many (its cost paid, its drafts dropped)
  kMtp,         // the MTP block's own
};

// How many of a round's k drafts are right before the first wrong one,
// when each is right with chance `rate` on its own: j < k with chance
// rate^j (1 - rate), k with chance rate^k. Drawn by inverting that
// distribution at a low-discrepancy sequence (golden-ratio steps from a
// seeded start) instead of by k coins: over the few dozen rounds of a run
// the counts then come in their expected proportions, so a figure measures
// the rate asked for, not the luck of one draw (independent coins gave
// 2.91 tokens a round over 64 tokens where 3.37 are expected at 0.8).
class RoundAcceptance {
 public:
  RoundAcceptance(double rate, uint64_t seed)
      : rate_(rate), u_(static_cast<double>(seed % 1000003) / 1000003.0) {}
  int64_t Next(int64_t k) {
    constexpr double kStep = 0.6180339887498949;  // (sqrt(5) - 1) / 2
    u_ += kStep;
    u_ -= static_cast<double>(static_cast<int64_t>(u_));
    // Below 1 - rate^(j+1), the chance of fewer than j + 1 right, j are right.
    double below = 1.0;
    for (int64_t j = 0; j < k; ++j) {
      below *= rate_;
      if (u_ < 1.0 - below) return j;
    }
    return k;
  }

 private:
  double rate_;
  double u_;
};

// The same n tokens with drafts per `source`. With `adaptive`, the
// Speculator's policy chooses how many to verify (from the acceptance it
// sees and the row and draft costs the steps show).
Result<RunResult> Drafted(Engine& engine, const Snapshot& start, const std::vector<int32_t>& record, int64_t n,
                          int64_t drafts, double rate, uint64_t seed, bool adaptive, DraftSource source) {
  LINEAGE_ASSIGN_OR_RETURN(Sequence seq, engine.Admit(*start.kv, start.recurrent.get()));
  SpecOptions so;
  so.type = SpecType::kNgram;
  so.draft_max = drafts;
  so.adaptive = adaptive;
  Speculator spec(so);
  StepCosts costs;
  std::mt19937_64 rng(seed);
  RoundAcceptance acceptance(rate, seed);
  const int32_t vocab = static_cast<int32_t>(engine.config().vocab);
  RunResult r;
  r.tokens.push_back(record[0]);
  std::vector<float> logits;
  std::vector<int32_t> draft, run;
  const Engine::ExpertCounts e0 = engine.expert_counts();
  const auto t0 = Clock::now();
  const bool mtp = source != DraftSource::kRecord;
  while (static_cast<int64_t>(r.tokens.size()) <= n) {
    const int64_t done = static_cast<int64_t>(r.tokens.size());
    const int64_t k = spec.DraftCount(drafts, n + 1 - done, costs, mtp ? costs.draft_cost() : 0.0);
    if (mtp && k > 0) {
      const MtpDraftRun dr{&seq, r.tokens.back(), k, &draft};
      const auto d0 = Clock::now();
      LINEAGE_RETURN_IF_ERROR(engine.DraftMtp(std::span(&dr, 1)));
      costs.ObserveDrafts(k, 1, SecondsBetween(d0, Clock::now()));
    }
    if (source != DraftSource::kMtp) {
      draft.assign(record.begin() + done, record.begin() + done + k);
      const int64_t right = acceptance.Next(k);
      if (right < k) {
        int32_t& t = draft[static_cast<size_t>(right)];
        t = (t + 1 + static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab - 1))) % vocab;
      }
    } else if (k == 0) {
      draft.clear();
    }
    run.assign(1, r.tokens.back());
    run.insert(run.end(), draft.begin(), draft.end());
    const int64_t at = seq.num_tokens();
    const VerifyRun vr = spec.Run(&seq, run);
    const auto s0 = Clock::now();
    LINEAGE_RETURN_IF_ERROR(engine.Verify(std::span(&vr, 1), &logits));
    costs.Observe(static_cast<int64_t>(run.size()), 1, SecondsBetween(s0, Clock::now()));
    const int64_t rows = TakeVerified(draft, logits, engine.config().vocab, [&](int64_t, std::span<const float> row) {
      r.tokens.push_back(Argmax(row));
      return static_cast<int64_t>(r.tokens.size()) > n ? -1 : r.tokens.back();
    });
    spec.Keep(engine, seq, at, rows, static_cast<int64_t>(run.size()));
  }
  r.seconds = SecondsBetween(t0, Clock::now());
  r.experts_per_layer = ExpertsPerLayer(e0, engine.expert_counts());
  r.proposed = spec.proposed();
  r.accepted = spec.accepted();
  r.rounds = spec.rounds();
  r.draft_cost = costs.draft_cost();
  return r;
}

// Prefills `prompt` into a new sequence of `engine`: its snapshot and first greedy token.
Result<std::pair<Snapshot, int32_t>> Start(Engine& engine, const std::vector<int32_t>& prompt) {
  Sequence seq = engine.NewSequence();
  PrefillResult pre;
  LINEAGE_RETURN_IF_ERROR(engine.Prefill(seq, prompt, {}, &pre));
  return std::pair<Snapshot, int32_t>{seq.Snap(), Argmax(pre.logits)};
}

}  // namespace

Result<SpecBenchReport> RunSpecBench(Engine& engine, const SpecBenchOptions& options, Engine* mtp) {
  if (options.prompt_tokens <= 0 || options.gen_tokens <= 0 || options.drafts < 1 || options.repeats < 1)
    return InvalidArgument("bad prompt, gen, drafts or repeats");
  const model::Model& m = engine.model();
  SpecBenchReport rep;
  rep.threads = engine.pool().size();
  rep.prompt_tokens = options.prompt_tokens;
  rep.gen_tokens = options.gen_tokens;
  rep.drafts = options.drafts;
  std::vector<int32_t> prompt;
  std::mt19937 rng(static_cast<uint32_t>(options.seed));
  for (int64_t i = 0; i < options.prompt_tokens; ++i)
    prompt.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(m.config.vocab)));
  LINEAGE_RETURN_IF_ERROR(MapEveryWeightPage(m));
  LINEAGE_ASSIGN_OR_RETURN(auto started, Start(engine, prompt));
  const auto& [start, first] = started;
  std::pair<Snapshot, int32_t> mtp_started;
  if (mtp != nullptr) {
    LINEAGE_ASSIGN_OR_RETURN(mtp_started, Start(*mtp, prompt));
    if (mtp_started.second != first) return Internal("the MTP engine's trunk gave another first token");
  }
  // Drafted runs go through the MTP engine when there is one.
  Engine& drafting = mtp != nullptr ? *mtp : engine;
  const Snapshot& drafting_start = mtp != nullptr ? mtp_started.first : start;
  const DraftSource paid = mtp != nullptr ? DraftSource::kRecordPaid : DraftSource::kRecord;
  // Warm-up: one plain run (and the record every drafted run must equal).
  LINEAGE_ASSIGN_OR_RETURN(RunResult record, Plain(engine, start, first, options.gen_tokens));
  rep.rows.resize(options.acceptance.size());
  for (int rep_i = 0; rep_i < options.repeats; ++rep_i) {
    LINEAGE_ASSIGN_OR_RETURN(RunResult plain, Plain(engine, start, first, options.gen_tokens));
    if (plain.tokens != record.tokens) return Internal("two greedy runs of the same prompt differ");
    rep.decode_tok_s = std::max(rep.decode_tok_s, static_cast<double>(options.gen_tokens) / plain.seconds);
    rep.decode_experts_per_layer = plain.experts_per_layer;
    for (size_t i = 0; i < options.acceptance.size(); ++i) {
      const double rate = options.acceptance[i];
      // The same draws in every repeat: the best of them filters the
      // machine's noise, not the luck of the drafts.
      const uint64_t seed = options.seed + 7919 * (i + 1);
      LINEAGE_ASSIGN_OR_RETURN(RunResult d, Drafted(drafting, drafting_start, record.tokens, options.gen_tokens,
                                                    options.drafts, rate, seed, false, paid));
      LINEAGE_ASSIGN_OR_RETURN(RunResult p, Drafted(drafting, drafting_start, record.tokens, options.gen_tokens,
                                                    options.drafts, rate, seed, true, paid));
      if (d.tokens != record.tokens || p.tokens != record.tokens) {
        return Internal("speculative decoding at acceptance " + std::to_string(rate) +
                        " gave other tokens than greedy decoding");
      }
      SpecBenchRow& row = rep.rows[i];
      row.policy_tok_s = std::max(row.policy_tok_s, static_cast<double>(options.gen_tokens) / p.seconds);
      row.policy_drafts_per_round = p.rounds > 0 ? static_cast<double>(p.proposed) / static_cast<double>(p.rounds) : 0;
      row.policy_draft_rounds = static_cast<double>(p.rounds) / static_cast<double>(options.gen_tokens);
      row.rate = rate;
      row.tok_s = std::max(row.tok_s, static_cast<double>(options.gen_tokens) / d.seconds);
      row.accepted = d.proposed > 0 ? static_cast<double>(d.accepted) / static_cast<double>(d.proposed) : 0;
      row.tokens_per_round = d.rounds > 0 ? static_cast<double>(options.gen_tokens) / static_cast<double>(d.rounds) : 0;
      row.experts_per_layer = d.experts_per_layer * (d.rounds > 0 ? 1.0 : 0.0);
    }
    if (mtp != nullptr) {
      LINEAGE_ASSIGN_OR_RETURN(RunResult fill, Plain(*mtp, mtp_started.first, first, options.gen_tokens));
      LINEAGE_ASSIGN_OR_RETURN(RunResult own, Drafted(*mtp, mtp_started.first, record.tokens, options.gen_tokens,
                                                      options.drafts, 1.0, options.seed, true, DraftSource::kMtp));
      if (fill.tokens != record.tokens || own.tokens != record.tokens)
        return Internal("decoding with the MTP block on gave other tokens than greedy decoding");
      rep.mtp_decode_tok_s = std::max(rep.mtp_decode_tok_s, static_cast<double>(options.gen_tokens) / fill.seconds);
      rep.mtp_tok_s = std::max(rep.mtp_tok_s, static_cast<double>(options.gen_tokens) / own.seconds);
      rep.mtp_accepted = own.proposed > 0 ? static_cast<double>(own.accepted) / static_cast<double>(own.proposed) : 0;
      rep.mtp_draft_cost = own.draft_cost;
    }
  }
  rep.mtp_speedup = rep.mtp_tok_s / rep.decode_tok_s;
  for (SpecBenchRow& row : rep.rows) {
    row.speedup = row.tok_s / rep.decode_tok_s;
    row.policy_speedup = row.policy_tok_s / rep.decode_tok_s;
  }
  return rep;
}

nlohmann::json SpecBenchReport::ToJson() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const SpecBenchRow& r : rows) {
    rows_json.push_back({{"draft_rate", r.rate},
                         {"accepted", r.accepted},
                         {"tokens_per_round", r.tokens_per_round},
                         {"tok_s", r.tok_s},
                         {"speedup", r.speedup},
                         {"experts_per_layer", r.experts_per_layer},
                         {"policy_tok_s", r.policy_tok_s},
                         {"policy_speedup", r.policy_speedup},
                         {"policy_drafts_per_round", r.policy_drafts_per_round}});
  }
  return {{"model", model},
          {"threads", threads},
          {"prompt_tokens", prompt_tokens},
          {"gen_tokens", gen_tokens},
          {"drafts", drafts},
          {"decode_tok_s", decode_tok_s},
          {"decode_experts_per_layer", decode_experts_per_layer},
          {"mtp",
           {{"decode_tok_s", mtp_decode_tok_s},
            {"draft_cost", mtp_draft_cost},
            {"accepted", mtp_accepted},
            {"tok_s", mtp_tok_s},
            {"speedup", mtp_speedup}}},
          {"speculative", rows_json}};
}

std::string SpecBenchReport::ToTable() const {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "model          %s\nthreads        %d\nprompt / gen   %lld / %lld tokens, %lld drafts per round\n",
                model.c_str(), threads, static_cast<long long>(prompt_tokens), static_cast<long long>(gen_tokens),
                static_cast<long long>(drafts));
  o << line;
  std::snprintf(line, sizeof line, "plain decode   %.1f tok/s", decode_tok_s);
  o << line;
  if (decode_experts_per_layer > 0) {
    std::snprintf(line, sizeof line, " (%.1f experts per MoE layer per step)", decode_experts_per_layer);
    o << line;
  }
  o << "\n\n            " << drafts << " drafts every round                    chosen by the policy\n";
  o << "draft right  accepted  tokens/round  tok/s    speedup  tok/s    speedup  drafts/round";
  if (decode_experts_per_layer > 0) o << "  experts/layer/step";
  o << "\n";
  for (const SpecBenchRow& r : rows) {
    std::snprintf(line, sizeof line, "%10.2f  %8.2f  %12.2f  %7.1f  %6.2fx  %7.1f  %6.2fx  %12.2f", r.rate, r.accepted,
                  r.tokens_per_round, r.tok_s, r.speedup, r.policy_tok_s, r.policy_speedup, r.policy_drafts_per_round);
    o << line;
    if (decode_experts_per_layer > 0) {
      std::snprintf(line, sizeof line, "  %18.1f", r.experts_per_layer);
      o << line;
    }
    o << "\n";
  }
  if (mtp_decode_tok_s > 0) {
    std::snprintf(line, sizeof line,
                  "\nMTP block: drafted runs paid its drafting pass (one draft %.2f of a decode step);\n"
                  "plain decode with its KV fill %.1f tok/s (%.2fx); its own drafts: %.0f%% taken, %.1f tok/s "
                  "(%.2fx, policy)\n",
                  mtp_draft_cost, mtp_decode_tok_s, mtp_decode_tok_s / decode_tok_s, 100 * mtp_accepted, mtp_tok_s,
                  mtp_speedup);
    o << line;
  }
  o << "(every drafted run produced exactly the plain run's greedy tokens)\n";
  return o.str();
}

}  // namespace lineage::engine
