// Agent-shaped traffic for `lineage tracegen` (docs/sim.md describes each
// scenario). Every scenario is deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/shapes.h"
#include "sim/trace.h"
#include "sim/tracegen/gen_context.h"

namespace lineage::sim {

std::vector<std::string> ScenarioNames();
// Generates `num_requests` requests of `scenario`, timed for the speeds of
// `pace_shape` (see GenContext).
Result<Trace> GenerateTrace(const std::string& scenario, uint64_t seed, int64_t num_requests,
                            const std::string& pace_shape = "glm-5.3-flash");

namespace gen {
// One generator per pattern; each emits sessions until it has emitted at
// least `target` requests.
void Assistants(GenContext& g, int64_t target);
void Coding(GenContext& g, int64_t target);
void Retries(GenContext& g, int64_t target);
void Clock(GenContext& g, int64_t target);
void RollingWindow(GenContext& g, int64_t target);
void MiddleDelete(GenContext& g, int64_t target);
void Fresh(GenContext& g, int64_t target);
// Not part of `mixed`: no hints at all, Mooncake-shaped (512-token blocks).
void Mooncake(GenContext& g, int64_t target);
}  // namespace gen

}  // namespace lineage::sim
