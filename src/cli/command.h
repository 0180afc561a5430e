// Subcommands of the `lineage` binary register themselves here, one file per
// subcommand (cmd_<name>.cpp), so adding one never edits main.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace lineage::cli {

struct Command {
  std::string name;
  std::string help;
  // Adds options to `sub`; returns the action run when `sub` was chosen.
  // The action returns the process exit code.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& Registry();

struct Register {
  explicit Register(Command c) { Registry().push_back(std::move(c)); }
};

}  // namespace lineage::cli
