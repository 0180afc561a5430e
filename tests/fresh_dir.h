// FreshDir: a fresh, empty directory for a test's files, removed when the
// test process exits.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace lineage::testing {

// A fresh, empty directory lineage_disk_<name>_<pid> under /dev/shm (or the
// system's temporary directory); every such directory of this process is
// removed at exit.
inline std::string FreshDir(const std::string& name) {
  // tmpfs when there is one: the tests exercise ordering and checksums, not the device's fsync.
  const std::filesystem::path base =
      access("/dev/shm", W_OK) == 0 ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
  const std::filesystem::path p = base /
                                  ("lineage_disk_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  static const pid_t owner = ::getpid();
  static bool registered = false;
  if (!registered) {  // forked children leave with _exit and never run this
    registered = true;
    std::atexit([] {
      if (::getpid() != owner) return;
      const std::string prefix = "lineage_disk_";
      const std::string suffix = "_" + std::to_string(owner);
      for (const char* base : {"/dev/shm", "/tmp"}) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
          const std::string name = e.path().filename().string();
          if (name.rfind(prefix, 0) == 0 && name.size() > suffix.size() &&
              name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            std::filesystem::remove_all(e.path(), ec);
          }
        }
      }
    });
  }
  return p.string();
}

}  // namespace lineage::testing
