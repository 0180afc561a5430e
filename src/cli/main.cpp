// The single `lineage` binary: dispatches to the registered subcommands.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "cli/command.h"

namespace lineage::cli {
std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace lineage::cli

int main(int argc, char** argv) {
  using lineage::cli::Registry;
  CLI::App app{"lineage: an LLM inference server for the CPU built around its prompt cache"};
  app.require_subcommand(1);
  auto& commands = Registry();
  std::sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return 1;
}
