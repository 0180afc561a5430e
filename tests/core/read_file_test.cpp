#include "core/read_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace lineage {
namespace {

TEST(ReadFileBounded, ReadsAFileAndRefusesWhatIsTooLargeOrMissing) {
  auto path = std::filesystem::temp_directory_path() / ("lineage_read_file_" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(1000, 'x');
  }
  auto whole = ReadFileBounded(path.string(), 1000);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, std::string(1000, 'x'));
  auto over = ReadFileBounded(path.string(), 999);
  EXPECT_EQ(over.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(over.status().message().find("999"), std::string::npos) << over.status().ToString();
  std::filesystem::remove(path);
  EXPECT_EQ(ReadFileBounded(path.string(), 1000).status().code(), StatusCode::kNotFound);
  // A device without an end stops at the bound, not at the end of memory.
  auto zero = ReadFileBounded("/dev/zero", 1 << 20);
  EXPECT_EQ(zero.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadFileBounded("/", 10).status().code(), StatusCode::kIoError);  // a directory
}

}  // namespace
}  // namespace lineage
