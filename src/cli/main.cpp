// The single `lineage` binary: dispatches to the registered subcommands.
//
// Command-line mistakes get a message naming what was wrong: an unknown
// subcommand (with the closest known one), an unknown option of the chosen
// subcommand (by its name, not the value after it); exit code 2.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/version.h"

namespace lineage::cli {
std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace lineage::cli

namespace {

constexpr int kUsageError = 2;

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

int UnknownSubcommand(const std::string& name) {
  std::string list, closest;
  size_t best = 3;  // suggest only near misses
  for (const auto& c : lineage::cli::Registry()) {
    list += (list.empty() ? "" : ", ") + c.name;
    size_t d = EditDistance(name, c.name);
    if (d < best) best = d, closest = c.name;
  }
  std::fprintf(stderr, "lineage: unknown subcommand '%s'", name.c_str());
  if (!closest.empty()) std::fprintf(stderr, " (did you mean '%s'?)", closest.c_str());
  std::fprintf(stderr, "\nsubcommands: %s; see 'lineage --help'\n", list.c_str());
  return kUsageError;
}

// The first argument after the subcommand that it does not take, by name.
int UnexpectedArguments(CLI::App* sub, int argc, char** argv) {
  std::string where = sub ? "lineage " + sub->get_name() : "lineage";
  for (int i = sub ? 2 : 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    if (arg.rfind("--", 0) != 0) name = arg.substr(0, 2);  // -t4
    if (sub && sub->get_option_no_throw(name)) continue;
    std::fprintf(stderr, "%s: unknown option '%s'; see '%s --help'\n", where.c_str(), name.c_str(), where.c_str());
    return kUsageError;
  }
  auto extras = sub ? sub->remaining() : std::vector<std::string>{};
  std::string what = extras.empty() ? std::string("?") : extras.back();
  std::fprintf(stderr, "%s: unexpected argument '%s'; see '%s --help'\n", where.c_str(), what.c_str(), where.c_str());
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  using lineage::cli::Registry;
  CLI::App app{"lineage: an LLM inference server for the CPU built around its prompt cache"};
  app.require_subcommand(1);
  app.set_version_flag("--version", lineage::cli::VersionLine());
  auto& commands = Registry();
  std::sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(*sub));
  }
  if (argc >= 2 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](auto& c) { return c.name == argv[1]; }))
    return UnknownSubcommand(argv[1]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError&) {
    CLI::App* chosen = nullptr;
    for (auto& [sub, action] : actions)
      if (argc >= 2 && sub->get_name() == argv[1]) chosen = sub;
    return UnexpectedArguments(chosen, argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return 1;
}
