#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

namespace lineage::engine {

int32_t Argmax(std::span<const float> logits) {
  // The first index of the largest value, as a scan keeping the first
  // strict improvement would give (NaN never wins; a NaN at 0 stays). In two
  // passes, because a running maximum over independent lanes vectorises and
  // the scan's branch on every element does not: a vocabulary of 248k was
  // ~4% of a decode step.
  const size_t n = logits.size();
  if (n == 0 || std::isnan(logits[0])) return 0;
  constexpr size_t kLanes = 16;
  float lane[kLanes];
  for (size_t j = 0; j < kLanes; ++j) lane[j] = logits[0];
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) lane[j] = logits[i + j] > lane[j] ? logits[i + j] : lane[j];
  float best = lane[0];
  for (size_t j = 1; j < kLanes; ++j) best = lane[j] > best ? lane[j] : best;
  for (; i < n; ++i) best = logits[i] > best ? logits[i] : best;
  for (size_t k = 0; k < n; ++k)
    if (logits[k] == best) return static_cast<int32_t>(k);
  return 0;
}

double Sampler::Uniform() {
  // SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable sequence per seed.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

void Sampler::Record(int32_t token) {
  if (adjust_.frequency_penalty != 0.0f || adjust_.presence_penalty != 0.0f) ++counts_[token];
}

std::span<const float> Sampler::Adjusted(std::span<const float> logits) {
  if (adjust_.logit_bias.empty() && counts_.empty()) return logits;
  adjusted_.assign(logits.begin(), logits.end());
  const int64_t n = static_cast<int64_t>(adjusted_.size());
  for (const auto& [id, bias] : adjust_.logit_bias)
    if (id >= 0 && id < n) adjusted_[id] += bias;
  for (const auto& [id, count] : counts_)
    if (id >= 0 && id < n) adjusted_[id] -= count * adjust_.frequency_penalty + adjust_.presence_penalty;
  return adjusted_;
}

int32_t Sampler::Next(std::span<const float> raw) {
  std::span<const float> logits = Adjusted(raw);
  if (params_.temperature <= 0.0f || logits.size() == 1) return Argmax(logits);
  candidates_.clear();
  candidates_.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_.push_back({logits[i], static_cast<int32_t>(i)});
  // Descending by logit, ties by id, so the order is total and reproducible.
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t keep = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    keep = static_cast<size_t>(params_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  const double inv_t = 1.0 / params_.temperature;
  const double max_logit = candidates_[0].first;
  std::vector<double> p(keep);
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    p[i] = std::exp((candidates_[i].first - max_logit) * inv_t);
    total += p[i];
  }
  if (params_.top_p < 1.0f) {
    double mass = 0.0;
    size_t cut = 0;
    while (cut < keep) {
      mass += p[cut++] / total;
      if (mass >= params_.top_p) break;
    }
    keep = cut;
    total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += p[i];
  }
  double u = Uniform() * total;
  for (size_t i = 0; i < keep; ++i) {
    u -= p[i];
    if (u < 0.0) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

Logprobs LogprobsOf(std::span<const float> logits, int32_t token, int32_t top) {
  // In double: a 248k-token sum of exponentials in float loses the tail.
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  const double log_z = mx + std::log(sum);
  Logprobs out;
  out.token = static_cast<float>(logits[static_cast<size_t>(token)] - log_z);
  const size_t k = std::min(static_cast<size_t>(std::max(top, 0)), logits.size());
  if (k == 0) return out;
  // The k best in one pass, kept in a min-heap of k (no copy of the vocabulary).
  auto better = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::vector<int32_t> best;
  best.reserve(k);
  for (size_t i = 0; i < logits.size(); ++i) {
    const int32_t id = static_cast<int32_t>(i);
    if (best.size() < k) {
      best.push_back(id);
      std::push_heap(best.begin(), best.end(), better);
    } else if (better(id, best.front())) {
      std::pop_heap(best.begin(), best.end(), better);
      best.back() = id;
      std::push_heap(best.begin(), best.end(), better);
    }
  }
  std::sort_heap(best.begin(), best.end(), better);
  for (int32_t id : best) out.top.push_back({id, static_cast<float>(logits[id] - log_z)});
  return out;
}

}  // namespace lineage::engine
