#include "fuzz/scratch_file.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

namespace lineage::fuzz {
namespace {

struct ScratchFiles {
  std::map<std::string, std::string> paths;  // suffix -> path
  ~ScratchFiles() {
    for (const auto& kv : paths) std::remove(kv.second.c_str());
  }
};

}  // namespace

std::string WriteScratchFile(const std::string& suffix, const uint8_t* data, size_t size) {
  static ScratchFiles files;
  std::string& path = files.paths[suffix];
  if (path.empty()) {
    std::error_code ec;
    std::string dir = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path(ec).string();
    path = dir + "/lineage-fuzz-" + std::to_string(getpid()) + suffix;
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return {};
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = std::fclose(f) == 0 && ok;
  return ok ? path : std::string();
}

}  // namespace lineage::fuzz
