// The server's folders keep to their layering (src/server/README.md): each
// folder includes only the server folders below it, and none includes the
// routes at the top. Read from the source tree, so a new include that
// breaks the order fails here rather than in a reviewer's head.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "source_tree.h"

namespace lineage::server {
namespace {

namespace fs = std::filesystem;

// folder -> the server folders it may include (itself always).
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"http", {}},
    {"api", {}},
    {"tools", {"api"}},
    {"kv_events", {}},
    {"generation", {"api", "tools", "kv_events"}},
    {"replies", {"api", "tools", "generation"}},
    {"observe", {"api", "generation"}},
};

TEST(ServerLayout, FoldersIncludeOnlyTheFoldersBelowThem) {
  const fs::path root = fs::path(LINEAGE_SOURCE_DIR) / "src/server";
  const std::regex include(R"re(#include "server/([^"]+)")re");
  std::set<std::string> seen;
  testing::ForEachSourceFile(root, [&](const fs::path& rel, const std::string& s) {
    if (std::next(rel.begin()) == rel.end()) return;  // the routes at the top may include anything
    const std::string folder = rel.begin()->string();
    ASSERT_TRUE(kMayInclude.count(folder)) << "src/server/" << folder << " is not in the layering (README.md, this test)";
    seen.insert(folder);
    for (std::sregex_iterator it(s.begin(), s.end(), include), end; it != end; ++it) {
      const std::string target = (*it)[1].str();
      const size_t slash = target.find('/');
      ASSERT_NE(slash, std::string::npos) << rel << " includes the routes' server/" << target;
      const std::string to = target.substr(0, slash);
      EXPECT_TRUE(to == folder || kMayInclude.at(folder).count(to))
          << rel << " (" << folder << ") includes server/" << target;
    }
  });
  // Every folder of the layering exists and says what it owns.
  for (const auto& [folder, deps] : kMayInclude) {
    EXPECT_TRUE(seen.count(folder)) << folder;
    EXPECT_TRUE(fs::exists(root / folder / "README.md")) << folder << "/README.md";
  }
}

}  // namespace
}  // namespace lineage::server
