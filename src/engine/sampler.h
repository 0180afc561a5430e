// Sampler: picks the next token from a row of logits.
//
// The logits are first adjusted as OpenAI's API defines: logit_bias is added
// per token, and a token already chosen c times loses
// c * frequency_penalty + presence_penalty (Record() counts the choices).
// temperature <= 0 is then greedy (argmax; the lowest id wins a tie). Otherwise:
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
#include <unordered_map>
#include <utility>
#include <vector>

namespace lineage::engine {

struct SamplingParams {
  float temperature = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
};

struct LogitAdjustments {
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token id, added logit); ids past the row are ignored
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params, LogitAdjustments adjust = {})
      : params_(params), adjust_(std::move(adjust)), state_(params.seed) {}

  int32_t Next(std::span<const float> logits);
  // Counts a token the sequence took, for the penalties.
  void Record(int32_t token);
  // The logits as Next() sees them before temperature: `logits` itself when
  // nothing adjusts them, else a copy with the bias and penalties applied.
  std::span<const float> Adjusted(std::span<const float> logits);
  // A uniform double in [0, 1) from the seeded stream.
  double Uniform();

 private:
  SamplingParams params_;
  LogitAdjustments adjust_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> candidates_;
  std::unordered_map<int32_t, int32_t> counts_;  // chosen tokens, when a penalty is set
  std::vector<float> adjusted_;
};

int32_t Argmax(std::span<const float> logits);

// log softmax(logits) at `token`, and the `top` most likely tokens with
// theirs (most likely first, ties to the lower id): what OpenAI's logprobs
// report, of the model's own distribution (before bias, penalties and
// temperature).
struct Logprobs {
  float token = 0;
  std::vector<std::pair<int32_t, float>> top;
};
Logprobs LogprobsOf(std::span<const float> logits, int32_t token, int32_t top);

}  // namespace lineage::engine
