// The speculative decoding benchmark behind `lineage bench --spec`: decode
// speed with drafts against without, at controlled acceptance.
//
// One prompt is prefilled once; every run decodes gen_tokens greedily from
// its snapshot. The plain run records the greedy tokens. A speculative run
// at rate a drafts `drafts` tokens per round from that record, each one
// wrong with probability 1 - a: a round's drafts are taken up to the first
// wrong one, as with real drafts, the number right drawn from its
// distribution by a low-discrepancy sequence (spec_bench.cpp,
// RoundAcceptance) so that a short run meets its expected acceptance, the
// same draws in every repeat;
// a run whose tokens differ from the record is an error, so every figure is
// also a check of exactness. Each rate runs twice: `drafts` every round, and
// as many as the Speculator's policy chooses (speculation.h), which is what
// the server does. Runs alternate (plain, then each rate) and each
// figure is the best of `repeats`: the machine is shared.
//
// With an engine running the model's MTP block (`--spec-type draft-mtp`),
// the drafted runs go through that engine and each round also pays for an
// MTP drafting pass of its k drafts (Engine::DraftMtp; its drafts are then
// replaced by the record's, so the acceptance stays the one asked for), and
// one more run per repeat drafts with the block's own drafts and reports
// their acceptance. The plain figure stays the plain engine's: the block's
// KV fill on every step is part of what drafting costs (its own figure,
// plain decode on the MTP engine, is reported beside).
//
// A mixture of experts verifies k + 1 rows whose tokens route to different
// experts, so a verification step reads more expert weights than a decode
// step; the report counts the distinct experts per MoE layer of both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/engine.h"

namespace lineage::engine {

struct SpecBenchOptions {
  int64_t prompt_tokens = 128;
  int64_t gen_tokens = 64;
  int64_t drafts = 4;  // per round
  std::vector<double> acceptance = {0.0, 0.5, 0.8, 1.0};
  int repeats = 3;
  uint64_t seed = 1;
};

struct SpecBenchRow {
  double rate = 0;          // chance that each draft is right
  double accepted = 0;      // drafts taken / drafts verified, measured
  double tokens_per_round = 0;
  double tok_s = 0;         // best of the repeats
  double speedup = 0;       // tok_s / the plain run's
  double experts_per_layer = 0;  // distinct routed experts per MoE layer per step (0: dense)
  // The same drafts, as many as the Speculator's policy verifies.
  double policy_tok_s = 0, policy_speedup = 0;
  double policy_drafts_per_round = 0;  // over the rounds that drafted
  double policy_draft_rounds = 0;      // rounds that drafted per token
};

struct SpecBenchReport {
  std::string model;
  int threads = 0;
  int64_t prompt_tokens = 0, gen_tokens = 0, drafts = 0;
  double decode_tok_s = 0;               // plain decode, best of the repeats
  double decode_experts_per_layer = 0;   // distinct routed experts per MoE layer per decode step
  std::vector<SpecBenchRow> rows;
  // With the MTP block (0 without): plain decode on its engine (the KV fill
  // included), one draft's pass beside a decode step, and the block's own
  // drafts: their acceptance and the policy's speed.
  double mtp_decode_tok_s = 0;
  double mtp_draft_cost = 0;
  double mtp_accepted = 0, mtp_tok_s = 0, mtp_speedup = 0;

  nlohmann::json ToJson() const;
  std::string ToTable() const;
};

// `mtp`: an engine of the same model with EngineOptions::mtp, or null.
Result<SpecBenchReport> RunSpecBench(Engine& engine, const SpecBenchOptions& options, Engine* mtp = nullptr);

}  // namespace lineage::engine
