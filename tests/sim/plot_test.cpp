// `replay --plot PATH`: gnuplot runs without a shell and its script names no
// file, so a path or title made of shell and gnuplot syntax runs nothing and
// the image lands at exactly the path given.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "sim/report.h"

namespace lineage::sim {
namespace {

namespace fs = std::filesystem;

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string Head(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  return s.substr(0, n);
}

// Runs the lineage binary with `args` as its argument vector (no shell).
int RunLineage(std::vector<std::string> args) {
  args.insert(args.begin(), LINEAGE_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A fresh directory that is the working directory while it lives, so that a
// relative `touch INJECTED` would land in it.
class InFreshDir {
 public:
  explicit InFreshDir(const std::string& name)
      : old_(fs::current_path()), dir_(fs::path(::testing::TempDir()) / (name + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::current_path(dir_);
  }
  ~InFreshDir() {
    fs::current_path(old_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }
  // Every name in the directory.
  std::set<std::string> Names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }

 private:
  fs::path old_, dir_;
};

const std::vector<SweepPoint> kPoints = {{"lineage", int64_t{1} << 30, 0.5}, {"lineage", int64_t{2} << 30, 0.75},
                                         {"exact", int64_t{1} << 30, 0.25}, {"exact", int64_t{2} << 30, 0.5}};

TEST(Plot, APathAndTitleWithShellAndGnuplotSyntaxRunNothing) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  InFreshDir d("plot_inject_");
  const std::string title = "t';touch INJECTED_T;'`touch INJECTED_B` $(touch INJECTED_S)";
  const std::string png = "a';touch INJECTED;'.png";
  ASSERT_TRUE(PlotSweep(kPoints, title, png).ok());
  EXPECT_EQ(Head(png, 4), "\x89PNG");
  // gnuplot opens a pipe for an output or data name that starts with '|' or '<'.
  const std::string svg = "|touch INJECTED_P;.svg";
  ASSERT_TRUE(PlotSweep(kPoints, title, svg).ok());
  EXPECT_NE(Head(svg, 4096).find("<svg"), std::string::npos);
  EXPECT_NE(Head(svg, 1 << 20).find("exact"), std::string::npos);
  const std::string lt = "<touch INJECTED_L;.svg";
  ASSERT_TRUE(PlotSweep(kPoints, title, lt).ok());
  EXPECT_TRUE(fs::is_regular_file(lt));
  std::set<std::string> expected;
  for (const std::string& p : {png, svg, lt})
    for (const char* suffix : {"", ".gp", ".dat"}) expected.insert(p + suffix);
  EXPECT_EQ(d.Names(), expected) << "only the plots, their scripts and their data";
}

TEST(Plot, ReplayPlotWritesAtExactlyThePathGiven) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  InFreshDir d("plot_cli_");
  ASSERT_EQ(RunLineage({"tracegen", "--scenario", "retries", "--seed", "2", "--requests", "40", "--out", "trace.jsonl"}),
            0);
  const std::string png = "a';touch INJECTED;'.png";
  ASSERT_EQ(RunLineage({"replay", "trace.jsonl", "--shape", "qwen3.5-0.8b", "--policy", "lineage,exact", "--plot", png}),
            0);
  EXPECT_EQ(d.Names(), (std::set<std::string>{"trace.jsonl", png, png + ".gp", png + ".dat"}));
  EXPECT_EQ(Head(png, 4), "\x89PNG");
  EXPECT_TRUE(fs::is_regular_file(png + ".gp"));
  EXPECT_TRUE(fs::is_regular_file(png + ".dat"));
}

TEST(Plot, AMissingDirectoryIsAnErrorNotACrash) {
  const Status st = PlotSweep(kPoints, "t", "/nonexistent-dir/x.png");
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace lineage::sim
