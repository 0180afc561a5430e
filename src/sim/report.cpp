#include "core/file_env.h"
#include "sim/report.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "trace/trace_io.h"

namespace lineage::sim {
namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Row(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    std::string c = cells[i];
    int pad = widths[i] - static_cast<int>(c.size());
    if (i == 0) line += c + std::string(static_cast<size_t>(std::max(pad, 0)), ' ');
    else line += "  " + std::string(static_cast<size_t>(std::max(pad, 0)), ' ') + c;
  }
  return line + "\n";
}

// Runs argv[0] (found on PATH) with `argv` and its standard output written to
// `out_path`, without a shell: no argument is parsed or quoted by anyone.
Status RunToFile(const std::vector<std::string>& argv, const std::string& out_path) {
  const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(out_path + ": " + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fd);
  if (err != 0) return IoError("cannot run " + argv[0] + ": " + std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return IoError("waiting for " + argv[0] + ": " + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return IoError(argv[0] + " failed (" +
                   (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                      : "signal " + std::to_string(WTERMSIG(status))) +
                   ") writing " + out_path);
  }
  return Status::Ok();
}

}  // namespace

std::string FormatTable(const std::vector<ReplayResult>& results) {
  std::vector<std::vector<std::string>> rows = {{"policy", "tiers", "requests", "prompt tok", "cached tok", "of oracle",
                                                 "RAM peak", "disk written", "disk read", "evictions",
                                                 "TTFT p50", "TTFT p95", "TTFT mean"}};
  for (const ReplayResult& r : results) {
    rows.push_back({r.policy, r.disk_tier ? "RAM+disk" : "RAM", std::to_string(r.requests), std::to_string(r.prompt_tokens),
                    std::to_string(r.cached_tokens), Fmt("%.1f%%", 100.0 * r.share_of_oracle()),
                    FormatBytes(r.counters.ram_peak_bytes), FormatBytes(r.counters.disk_written_bytes),
                    FormatBytes(r.counters.disk_read_bytes), std::to_string(r.counters.evictions),
                    Fmt("%.2fs", r.ttft_p50_s), Fmt("%.2fs", r.ttft_p95_s), Fmt("%.2fs", r.ttft_mean_s)});
  }
  std::vector<int> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], static_cast<int>(row[i].size()));
  std::string out;
  for (const auto& row : rows) out += Row(row, widths);
  return out;
}

std::string FormatJson(const std::vector<ReplayResult>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const ReplayResult& r : results) {
    arr.push_back({{"policy", r.policy},
                   {"disk_tier", r.disk_tier},
                   {"requests", r.requests},
                   {"prompt_tokens", r.prompt_tokens},
                   {"cached_tokens", r.cached_tokens},
                   {"oracle_tokens", r.oracle_tokens},
                   {"share_of_oracle", r.share_of_oracle()},
                   {"ram_peak_bytes", r.counters.ram_peak_bytes},
                   {"disk_written_bytes", r.counters.disk_written_bytes},
                   {"disk_read_bytes", r.counters.disk_read_bytes},
                   {"evictions", r.counters.evictions},
                   {"ttft_p50_s", r.ttft_p50_s},
                   {"ttft_p95_s", r.ttft_p95_s},
                   {"ttft_mean_s", r.ttft_mean_s},
                   {"replay_wall_s", r.wall_s}});
  }
  return arr.dump(2) + "\n";
}

std::vector<int64_t> SweepBudgets(int64_t default_ram_bytes) {
  return {default_ram_bytes / 16, default_ram_bytes / 8, default_ram_bytes / 4,
          default_ram_bytes / 2,  default_ram_bytes,     default_ram_bytes * 2};
}

Status PlotSweep(const std::vector<SweepPoint>& points, const std::string& title, const std::string& path) {
  if (path.empty()) return InvalidArgument("plot: no path");
  std::map<std::string, std::vector<const SweepPoint*>> by_policy;
  std::vector<std::string> order;
  for (const SweepPoint& p : points) {
    if (!by_policy.count(p.policy)) order.push_back(p.policy);
    by_policy[p.policy].push_back(&p);
  }
  std::string dat;
  for (const std::string& name : order) {
    dat += "# " + name + "\n";
    for (const SweepPoint* p : by_policy[name])
      dat += Fmt("%.6f", static_cast<double>(p->ram_budget_bytes) / (1024.0 * 1024 * 1024)) + " " +
             Fmt("%.4f", 100.0 * p->share_of_oracle) + "\n";
    dat += "\n\n";
  }
  LINEAGE_RETURN_IF_ERROR(WriteFileAtomic(path + ".dat", dat));
  // The script names no file and quotes no argument: the data is inline, the
  // image goes to gnuplot's standard output (which is `path`, opened here),
  // and the title and policy names arrive as ARG1 and ARG2. A path or title
  // with quotes, backquotes, '|' or '<' therefore means nothing to gnuplot.
  std::string names;
  for (const std::string& name : order) names += (names.empty() ? "" : " ") + name;
  const bool svg = path.size() >= 4 && path.substr(path.size() - 4) == ".svg";
  std::string gp = "# gnuplot -c THIS_FILE TITLE 'POLICY ...' > IMAGE\n";
  gp += svg ? "set terminal svg size 900,560\n" : "set terminal pngcairo size 900,560\n";
  gp += "set title ARG1 noenhanced\n";
  gp += "set logscale x 2\nset xlabel 'RAM budget (GiB)'\nset ylabel 'share of oracle (%)'\n";
  gp += "set yrange [0:105]\nset key bottom right noenhanced\nset grid\n";
  gp += "$sweep << EOD\n" + dat + "EOD\n";
  gp += "plot for [i=1:words(ARG2)] $sweep index (i-1) using 1:2 with linespoints title word(ARG2, i)\n";
  LINEAGE_RETURN_IF_ERROR(WriteFileAtomic(path + ".gp", gp));
  // gnuplot runs a script name that starts with '<' as a command: "./" first.
  const std::string script = (path.front() == '/' ? "" : "./") + path + ".gp";
  return RunToFile({"gnuplot", "-c", script, title, names}, path);
}

}  // namespace lineage::sim
