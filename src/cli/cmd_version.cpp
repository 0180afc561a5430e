#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/command.h"

namespace lineage::cli {
namespace {
Register reg{{"version", "Print the version and the CPU features in use", [](CLI::App&) {
                return std::function<int()>([] {
                  std::printf("lineage 0.1.0 (avx512f %s, avx512bf16 %s, avx2 %s)\n",
                              __builtin_cpu_supports("avx512f") ? "yes" : "no",
                              __builtin_cpu_supports("avx512bf16") ? "yes" : "no",
                              __builtin_cpu_supports("avx2") ? "yes" : "no");
                  return 0;
                });
              }}};
}  // namespace
}  // namespace lineage::cli
