// The version line `lineage version` and `lineage --version` print.
#pragma once

#include <string>

namespace lineage::cli {

inline std::string VersionLine() {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  return std::string("lineage 0.1.0 (avx512f ") + yes(__builtin_cpu_supports("avx512f")) + ", avx512bf16 " +
         yes(__builtin_cpu_supports("avx512bf16")) + ", avx2 " + yes(__builtin_cpu_supports("avx2")) + ")";
}

}  // namespace lineage::cli
