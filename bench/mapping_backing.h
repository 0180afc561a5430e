// MappingBacking: how the memory mapping holding an address is backed
// (4 KiB or 2 MiB pages), for benchmarks that stream weights from a mapped
// file. Linux only; reads /proc/self/smaps.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace lineage::bench {

// How the mapping that contains `p` is backed, from /proc/self/smaps:
// "Rss: N MiB  AnonHugePages: N MiB  FilePmdMapped: N MiB" (2 MiB pages
// show as AnonHugePages for anonymous memory, FilePmdMapped for a file).
inline std::string MappingBacking(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  std::string out;
  for (std::string line; std::getline(in, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
      inside = addr >= lo && addr < hi;
      continue;
    }
    if (!inside) continue;
    for (const char* key : {"Rss:", "AnonHugePages:", "FilePmdMapped:"}) {
      if (line.rfind(key, 0) == 0) {
        const long kb = std::atol(line.c_str() + std::strlen(key));
        out += std::string(out.empty() ? "" : "  ") + key + " " + std::to_string(kb / 1024) + " MiB";
      }
    }
  }
  return out;
}

}  // namespace lineage::bench
