// The product's libraries never include the tooling library (src/tools:
// model writers, random models, the reference forward, synthetic
// vocabularies, bench workloads), so a server could be built without it.
// Read from the source tree, like the server's layering test.
#include <gtest/gtest.h>

#include <filesystem>

#include "source_tree.h"

namespace lineage {
namespace {

namespace fs = std::filesystem;

TEST(ToolingApart, NoProductLibraryIncludesTheTools) {
  const fs::path src = fs::path(LINEAGE_SOURCE_DIR) / "src";
  int files = 0;
  for (const char* product : {"core", "model", "text", "cache", "trace", "engine", "sim", "server"}) {
    ASSERT_TRUE(fs::is_directory(src / product)) << product;
    files += testing::ForEachSourceFile(src / product, [&](const fs::path& rel, const std::string& text) {
      EXPECT_EQ(text.find("#include \"tools/"), std::string::npos)
          << product << "/" << rel.string() << " includes the tooling library";
    });
  }
  EXPECT_GT(files, 100);
  // And the tooling is where the rule says.
  EXPECT_TRUE(fs::exists(src / "tools/write_model.h"));
  EXPECT_TRUE(fs::exists(src / "tools/reference_forward.h"));
}

}  // namespace
}  // namespace lineage
