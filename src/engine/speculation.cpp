#include "engine/speculation.h"

#include <algorithm>
#include <cmath>

namespace lineage::engine {

Result<SpecType> ParseSpecType(std::string_view name) {
  if (name == "none") return SpecType::kNone;
  if (name == "ngram-simple" || name == "ngram" || name == "prompt-lookup") return SpecType::kNgram;
  if (name == "draft-mtp" || name == "mtp") return SpecType::kMtp;
  return InvalidArgument("unknown speculative decoding type '" + std::string(name) +
                         "' (none, ngram-simple, draft-mtp)");
}

std::string_view SpecTypeName(SpecType type) {
  switch (type) {
    case SpecType::kNone: return "none";
    case SpecType::kNgram: return "ngram-simple";
    case SpecType::kMtp: return "draft-mtp";
  }
  return "none";
}

namespace {
constexpr double kWeight = 0.2;  // of the newest step in an average
}  // namespace

void StepCosts::Observe(int64_t rows, int64_t sequences, double seconds) {
  if (sequences <= 0 || rows < sequences || seconds <= 0) return;
  const int64_t n = std::clamp<int64_t>((rows + sequences / 2) / sequences, 1, kLearntRows);
  const double per = seconds / static_cast<double>(sequences);
  double& s = seconds_[static_cast<size_t>(n)];
  s = s > 0 ? (1 - kWeight) * s + kWeight * per : per;
}

double StepCosts::DecodeSeconds() const {
  if (seconds_[1] > 0) return seconds_[1];
  int64_t n1 = 0, n2 = 0;
  for (int64_t n = 2; n <= kLearntRows && n2 == 0; ++n) {
    if (seconds_[static_cast<size_t>(n)] <= 0) continue;
    (n1 == 0 ? n1 : n2) = n;
  }
  if (n1 == 0) return 0.0;
  const double t1 = seconds_[static_cast<size_t>(n1)];
  const double prior = t1 / (1.0 + initial_row_cost_ * static_cast<double>(n1 - 1));
  if (n2 == 0) return prior;
  const double slope = (seconds_[static_cast<size_t>(n2)] - t1) / static_cast<double>(n2 - n1);
  const double back = t1 - slope * static_cast<double>(n1 - 1);
  // Noise can tilt a line of two points anywhere: keep what a decode step
  // can be, more than a tenth of the smaller step and no more than it.
  return back > 0.1 * t1 && back <= t1 ? back : prior;
}

double StepCosts::StepCost(int64_t rows_per_sequence) const {
  const int64_t n = rows_per_sequence;
  if (n <= 1) return 1.0;
  const double d = DecodeSeconds();
  if (d <= 0) return 1.0 + initial_row_cost_ * static_cast<double>(n - 1);
  // The timed sizes around n, (1, d) standing in below the smallest.
  int64_t lo = 1, below_lo = 1, hi = 0;
  for (int64_t m = 2; m <= kLearntRows; ++m) {
    if (seconds_[static_cast<size_t>(m)] <= 0) continue;
    if (m <= n) {
      below_lo = lo, lo = m;
    } else {
      hi = m;
      break;
    }
  }
  const auto at = [&](int64_t m) { return m == 1 ? d : seconds_[static_cast<size_t>(m)]; };
  if (lo == n) return at(n) / d;
  double slope;
  if (hi > 0) {
    slope = (at(hi) - at(lo)) / static_cast<double>(hi - lo);
  } else if (lo > 1) {
    slope = (at(lo) - at(below_lo)) / static_cast<double>(lo - below_lo);
  } else {
    slope = initial_row_cost_ * d;
  }
  // A further row is never free.
  slope = std::max(slope, 0.01 * d);
  return (at(lo) + slope * static_cast<double>(n - lo)) / d;
}

void StepCosts::ObserveDrafts(int64_t depth, int64_t sequences, double seconds) {
  const double decode_s = DecodeSeconds();
  if (depth <= 0 || sequences <= 0 || seconds <= 0 || decode_s <= 0) return;
  const double cost = std::clamp(seconds / static_cast<double>(depth) / (decode_s * static_cast<double>(sequences)),
                                 0.01, 4.0);
  draft_cost_ = (1 - kWeight) * draft_cost_ + kWeight * cost;
}

Speculator::Speculator(const SpecOptions& options) : options_(options) {}

int64_t Speculator::DraftCount(int64_t available, int64_t limit, const StepCosts& costs, double per_draft) {
  if (!enabled()) return 0;
  const int64_t most = std::min({available, limit, options_.draft_max});
  const int64_t least = std::max<int64_t>(1, options_.draft_min);
  if (most < least) return 0;
  if (!options_.adaptive) return most;
  const double a = acceptance();
  int64_t best = 0;
  double best_rate = 1.0;  // a plain decode step: one token per unit cost
  double expected = 1.0, power = 1.0;
  for (int64_t k = 1; k <= most; ++k) {
    power *= a;
    expected += power;  // 1 + a + ... + a^k tokens per round
    const double rate = expected / (costs.StepCost(k + 1) + per_draft * static_cast<double>(k));
    if (k >= least && rate > best_rate) best = k, best_rate = rate;
  }
  // Probes cost a draft's share of a step each: no more than kProbeBudget of
  // the steps (MTP drafts cost their pass as well as their row).
  const double probe_cost = costs.row_cost() + per_draft;
  const int64_t probe_every =
      std::max<int64_t>(kProbeEvery, static_cast<int64_t>(std::ceil(probe_cost / kProbeBudget)));
  if (best == 0 && ++idle_rounds_ >= probe_every) best = least;
  if (best > 0) idle_rounds_ = 0;
  return best;
}

std::vector<int32_t> Speculator::Propose(std::span<const int32_t> prompt, std::span<const int32_t> reply,
                                         int64_t limit, const StepCosts& costs) {
  if (!enabled() || limit <= 0 || options_.type != SpecType::kNgram) return {};
  std::vector<int32_t> drafts = PromptLookupDrafts(prompt, reply, std::min(limit, options_.draft_max), options_.lookup);
  drafts.resize(static_cast<size_t>(DraftCount(static_cast<int64_t>(drafts.size()), limit, costs)));
  return drafts;
}

void Speculator::Keep(Engine& engine, Sequence& seq, int64_t start, int64_t rows_used, int64_t run_tokens) {
  const int64_t drafts = run_tokens - 1, taken = rows_used - 1;
  if (rows_used < run_tokens) {
    engine.RollBack(seq, start + rows_used, log_);
  }
  Settle(drafts, taken);
}

void Speculator::Settle(int64_t drafts, int64_t taken) {
  if (drafts <= 0) return;
  ++rounds_;
  proposed_ += drafts;
  accepted_ += taken;
  // Decay old rounds: a sequence moves between text it repeats and new text.
  constexpr double kKeep = 0.85;
  taken_ = kKeep * taken_ + static_cast<double>(taken);
  missed_ = kKeep * missed_ + (taken < drafts ? 1.0 : 0.0);
  // Keep the estimate off 0 and 1, so neither side locks in.
  taken_ = std::max(taken_, 0.05);
  missed_ = std::max(missed_, 0.05);
}

}  // namespace lineage::engine
