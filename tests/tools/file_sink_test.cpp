// FileSink writes through a FileEnv: a full disk while writing a model is an
// error, and neither the file nor its temporary is left behind.
#include "tools/file_sink.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/read_file.h"
#include "full_disk_env.h"

namespace lineage::model {
namespace {

TEST(FileSink, AFullDiskIsAnErrorAndLeavesNothing) {
  const auto dir = std::filesystem::temp_directory_path() / ("lineage_file_sink_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.bin").string();
  const std::string block(3 << 20, 'x');  // written in 8 MiB appends: the third block's append fails
  {
    lineage::testing::FullDiskEnv env(/*budget=*/5 << 20);
    FileSink sink(path, &env);
    ASSERT_TRUE(sink.Open().ok());
    Status st;
    for (int i = 0; i < 4 && st.ok(); ++i) st = sink.Write(block.data(), block.size());
    if (st.ok()) st = sink.Commit();
    EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  // With room, the same bytes land whole.
  {
    FileSink sink(path);
    ASSERT_TRUE(sink.Open().ok());
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(sink.Write(block.data(), block.size()).ok());
    ASSERT_TRUE(sink.Commit().ok());
  }
  Result<std::string> back = ReadFileBounded(path, uint64_t{64} << 20);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->size(), 4 * block.size());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lineage::model
