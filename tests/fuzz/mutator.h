// Mutator: deterministic, seeded edits of a byte string, in the manner of
// libFuzzer's default mutations (bit flips, interesting integers, byte runs
// erased, duplicated or inserted, dictionary tokens, splices with another
// input), plus deep nesting of a part of the input in the target's brackets. The same seed and inputs give the same sequence of outputs.
// Not thread-safe; one per driver.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace lineage::fuzz {

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>* dictionary,
          const std::vector<std::pair<std::string, std::string>>* nestings = nullptr)
      : rng_(seed), dictionary_(dictionary), nestings_(nestings) {}

  // 1..8 stacked edits of `base`; `other` is a splice partner. The result
  // is at most max_bytes long.
  std::string Mutate(const std::string& base, const std::string& other, size_t max_bytes);
  uint64_t Next() { return rng_(); }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  void MutateOnce(std::string& s, const std::string& other);

  std::mt19937_64 rng_;
  const std::vector<std::string>* dictionary_;
  const std::vector<std::pair<std::string, std::string>>* nestings_;
};

}  // namespace lineage::fuzz
