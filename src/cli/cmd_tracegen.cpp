// `lineage tracegen`: writes agent-shaped traffic as a trace (docs/traces.md).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/file_env.h"
#include "cli/command.h"
#include "trace/trace_io.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::cli {
namespace {

struct TracegenArgs {
  std::string scenario = "mixed";
  uint64_t seed = 1;
  std::string out;
  int64_t requests = 2000;
  std::string format = "native";
  std::string pace = "glm-5.3-flash";
};

int RunTracegen(const TracegenArgs& a) {
  Result<sim::Trace> trace = sim::GenerateTrace(a.scenario, a.seed, a.requests, a.pace);
  if (!trace.ok()) {
    std::fprintf(stderr, "tracegen: %s\n", trace.status().ToString().c_str());
    return 2;
  }
  std::string bytes = a.format == "mooncake" ? sim::FormatMooncake(*trace) : sim::FormatNative(*trace);
  Status st = WriteFileAtomic(a.out, bytes);
  if (!st.ok()) {
    std::fprintf(stderr, "tracegen: %s\n", st.ToString().c_str());
    return 1;
  }
  int64_t tokens = 0;
  for (const sim::Request& r : trace->requests) tokens += r.num_prompt_tokens;
  std::printf("%s: %zu requests, %zu sessions, %lld prompt tokens\n", a.out.c_str(), trace->requests.size(),
              trace->sessions.size(), static_cast<long long>(tokens));
  return 0;
}

Register reg{{"tracegen", "Write agent-shaped traffic as a trace file", [](CLI::App& sub) {
                auto args = std::make_shared<TracegenArgs>();
                std::string names;
                for (const std::string& n : sim::ScenarioNames()) names += (names.empty() ? "" : ", ") + n;
                sub.add_option("--scenario", args->scenario, "one of: " + names)->capture_default_str();
                sub.add_option("--seed", args->seed, "random seed")->capture_default_str();
                sub.add_option("--out", args->out, "output file")->required();
                sub.add_option("--requests", args->requests, "number of requests")->capture_default_str();
                sub.add_option("--pace", args->pace, "model shape whose speeds time each session's turns")
                    ->capture_default_str();
                sub.add_option("--format", args->format, "native or mooncake")
                    ->check(CLI::IsMember({"native", "mooncake"}))
                    ->capture_default_str();
                return std::function<int()>([args] { return RunTracegen(*args); });
              }}};

}  // namespace
}  // namespace lineage::cli
