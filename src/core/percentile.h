// Nearest-rank percentile of a sample, shared by the simulator's latency
// figures and the engine benchmark's medians and quartiles.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace lineage {

// The smallest value with at least a share p (0 < p <= 1) of the sample at or
// below it; 0 for an empty sample.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(k == 0 ? 0 : k - 1, v.size() - 1)];
}

}  // namespace lineage
