#include "sim/tracegen/scenarios.h"

#include <utility>

namespace lineage::sim {
namespace {

using Generator = void (*)(gen::GenContext&, int64_t);

const std::vector<std::pair<std::string, Generator>>& Patterns() {
  static const std::vector<std::pair<std::string, Generator>> patterns = {
      {"assistants", gen::Assistants}, {"coding", gen::Coding},       {"retries", gen::Retries},
      {"clock", gen::Clock},           {"window", gen::RollingWindow}, {"middle-delete", gen::MiddleDelete},
      {"fresh", gen::Fresh},
  };
  return patterns;
}

// Shares of `mixed`, in percent, in Patterns() order.
constexpr int kMixedPercent[] = {20, 30, 10, 10, 10, 10, 10};

}  // namespace

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Patterns()) names.push_back(name);
  names.push_back("mixed");
  names.push_back("mooncake");
  return names;
}

Result<Trace> GenerateTrace(const std::string& scenario, uint64_t seed, int64_t num_requests,
                            const std::string& pace_shape) {
  if (num_requests <= 0) return InvalidArgument("--requests must be positive");
  LINEAGE_ASSIGN_OR_RETURN(ModelShape pace, FindShape(pace_shape));
  gen::GenContext g(seed);
  g.prefill_tokens_per_s = pace.prefill_tokens_per_s;
  g.decode_s_per_token = pace.decode_s_per_token;
  g.trace.scenario = scenario;
  g.trace.seed = seed;
  bool found = false;
  if (scenario == "mooncake") {
    gen::Mooncake(g, num_requests);
    found = true;
  }
  for (size_t i = 0; i < Patterns().size(); ++i) {
    const auto& [name, fn] = Patterns()[i];
    if (scenario == name) {
      fn(g, num_requests);
      found = true;
    } else if (scenario == "mixed") {
      fn(g, num_requests * kMixedPercent[i] / 100 + 1);
      found = true;
    }
  }
  if (!found) {
    std::string known;
    for (const std::string& n : ScenarioNames()) known += (known.empty() ? "" : ", ") + n;
    return NotFound("unknown scenario '" + scenario + "' (known: " + known + ")");
  }
  g.Finish(num_requests);
  return std::move(g.trace);
}

}  // namespace lineage::sim
