// What every benchmark prints about where it ran: the CPU model and the
// output of small shell commands (the commit, the file system, uptime).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace lineage::bench {

// Standard output of `cmd` with trailing newlines and spaces removed; empty
// when it cannot run.
inline std::string Shell(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// "model name" of /proc/cpuinfo, or "unknown".
inline std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

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
