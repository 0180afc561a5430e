// Replay output: the comparison table (text and JSON) and the plot of share
// of oracle against RAM budget (drawn by gnuplot).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sim/replay.h"

namespace lineage::sim {

std::string FormatTable(const std::vector<ReplayResult>& results);
std::string FormatJson(const std::vector<ReplayResult>& results);

// One point of the budget sweep.
struct SweepPoint {
  std::string policy;
  int64_t ram_budget_bytes = 0;
  double share_of_oracle = 0;
};

// Budgets 1/16 .. 2x of `default_ram_bytes`.
std::vector<int64_t> SweepBudgets(int64_t default_ram_bytes);

// Writes `path` (.png or .svg) with gnuplot; the data and script are written
// beside it (path + ".dat", path + ".gp"). gnuplot runs without a shell and
// its script names no file, so `path` and `title` may hold any character.
Status PlotSweep(const std::vector<SweepPoint>& points, const std::string& title, const std::string& path);

}  // namespace lineage::sim
