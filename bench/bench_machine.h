// What every benchmark prints about where it ran: the CPU model and the
// output of small shell commands (the commit, the file system, uptime).
#pragma once

#include <cstdio>
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

}  // namespace lineage::bench
