#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace lineage {
namespace {

// The resident kilobytes of the mapping that starts at `p`
// (/proc/self/smaps), or -1 when it is not listed.
long ResidentKiB(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  char start[32];
  std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(p));
  bool in_mapping = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind(start, 0) == 0) {
      in_mapping = true;
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

TEST(MappedFile, PopulateMapsEveryPageOfTheFile) {
  const std::string path = ::testing::TempDir() + "/mapped_file_populate.bin";
  constexpr size_t kBytes = 8 << 20;
  {
    std::vector<char> bytes(kBytes);
    for (size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<char>(i * 131 % 251);
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(kBytes));
  }
  auto f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const long before = ResidentKiB(f->data());
  if (before < 0) GTEST_SKIP() << "/proc/self/smaps does not list the mapping";
  EXPECT_LT(before, static_cast<long>(kBytes / 1024));  // nothing read yet
  ASSERT_TRUE(f->Populate().ok());
  EXPECT_EQ(ResidentKiB(f->data()), static_cast<long>(kBytes / 1024));
  EXPECT_EQ(f->data()[kBytes - 1], static_cast<uint8_t>((kBytes - 1) * 131 % 251));
  std::remove(path.c_str());
}

TEST(MappedFile, PopulatingAnEmptyFileIsANoOp) {
  const std::string path = ::testing::TempDir() + "/mapped_file_empty.bin";
  std::ofstream(path, std::ios::binary).flush();
  auto f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Populate().ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace lineage
