#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/command.h"
#include "cli/version.h"

namespace lineage::cli {
namespace {
Register reg{{"version", "Print the version and the CPU features in use", [](CLI::App&) {
                return std::function<int()>([] {
                  std::printf("%s\n", VersionLine().c_str());
                  return 0;
                });
              }}};
}  // namespace
}  // namespace lineage::cli
