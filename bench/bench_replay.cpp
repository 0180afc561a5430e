// bench_replay: the replay's own speed. Generates the `mixed` scenario
// (10,000 requests by default, or argv[1]) and replays it through every
// policy on the glm-5.3-flash shape at its default budgets; prints the
// machine, the build, the commit, then requests/s per policy as a table and
// as JSON.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/tracegen/scenarios.h"
#include "bench_machine.h"

using lineage::bench::Shell;

int main(int argc, char** argv) {
  using namespace lineage::sim;
  const int64_t num_requests = argc > 1 ? std::atoll(argv[1]) : 10'000;
  std::printf("bench_replay: machine %s, %u threads; build %s; commit %s\n",
              Shell("uname -srm").c_str(), std::thread::hardware_concurrency(),
#ifdef NDEBUG
              "release",
#else
              "debug",
#endif
              Shell("git rev-parse --short HEAD 2>/dev/null").c_str());
  auto t0 = std::chrono::steady_clock::now();
  auto trace = GenerateTrace("mixed", 1, num_requests);
  if (!trace.ok()) {
    std::fprintf(stderr, "%s\n", trace.status().ToString().c_str());
    return 1;
  }
  double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int64_t tokens = 0;
  for (const Request& r : trace->requests) tokens += r.num_prompt_tokens;
  std::printf("workload: tracegen mixed seed 1, %zu requests, %lld prompt tokens (generated in %.2f s)\n",
              trace->requests.size(), static_cast<long long>(tokens), gen_s);
  ModelShape shape = FindShape("glm-5.3-flash").value();
  PolicyOptions options{shape.ram_budget_bytes, shape.disk_budget_bytes};
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-14s %10s %12s %10s\n", "policy", "replay s", "requests/s", "of oracle");
  auto oracle_policy = MakePolicy("oracle", shape, options).value();
  int64_t oracle_tokens = Replay(*trace, shape, *oracle_policy).value().cached_tokens;
  for (const std::string& name : PolicyNames()) {
    auto policy = MakePolicy(name, shape, options).value();
    auto r = Replay(*trace, shape, *policy);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), r.status().ToString().c_str());
      return 1;
    }
    double rps = static_cast<double>(r->requests) / r->wall_s;
    double share = static_cast<double>(r->cached_tokens) / static_cast<double>(oracle_tokens);
    std::printf("%-14s %10.2f %12.0f %9.1f%%\n", name.c_str(), r->wall_s, rps, 100 * share);
    out.push_back({{"policy", name}, {"replay_s", r->wall_s}, {"requests_per_s", rps}, {"share_of_oracle", share}});
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
