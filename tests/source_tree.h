// The project's own sources, read for tests that check the build's rules
// (which module or folder may include which).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "core/read_file.h"

namespace lineage::testing {

// Calls fn(path relative to `root`, text) for every .h, .cpp and .inc file
// under `root`; returns how many.
inline int ForEachSourceFile(const std::filesystem::path& root,
                             const std::function<void(const std::filesystem::path&, const std::string&)>& fn) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".inc")) continue;
    Result<std::string> text = ReadFileBounded(entry.path().string(), uint64_t{1} << 24);
    if (!text.ok()) continue;
    ++files;
    fn(std::filesystem::relative(entry.path(), root), *text);
  }
  return files;
}

}  // namespace lineage::testing
