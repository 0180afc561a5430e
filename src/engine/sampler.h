// Sampler: picks the next token from a row of logits.
//
// temperature <= 0 is greedy (argmax; the lowest id wins a tie). Otherwise:
// logits / temperature, keep the top_k most likely (top_k <= 0: all), keep
// the smallest prefix of those, by descending probability, whose mass
// reaches top_p (top_p >= 1: all), renormalise and draw. The draw uses a
// SplitMix64 stream seeded by `seed`, so a seed gives the same tokens on
// every platform and run.
//
// Thread-safety: a Sampler is used by one sequence at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace lineage::engine {

struct SamplingParams {
  float temperature = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params) : params_(params), state_(params.seed) {}

  int32_t Next(std::span<const float> logits);
  // A uniform double in [0, 1) from the seeded stream.
  double Uniform();

 private:
  SamplingParams params_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> candidates_;
};

int32_t Argmax(std::span<const float> logits);

}  // namespace lineage::engine
