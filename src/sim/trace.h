// The simulator speaks the trace format's vocabulary (src/trace): its
// requests, segments and helpers, unqualified inside lineage::sim.
#pragma once

#include "trace/trace.h"

namespace lineage::sim {
using namespace lineage::trace;
}  // namespace lineage::sim
