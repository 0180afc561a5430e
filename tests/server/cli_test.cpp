// The `lineage` command line as a user meets it: wrong subcommands, flags
// and values get a message naming the mistake and a non-zero exit; `serve`
// refuses a busy port and says when it clamps --ctx-size.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"
#include "fake_backend.h"
#include "node_clients.h"

namespace lineage::server {
namespace {

struct CliRun {
  int code = 0;
  std::string out;  // stdout and stderr
};

CliRun Lineage(const std::string& args) {
  CliRun r;
  r.code = testing::RunShell(std::string("timeout 60 '") + LINEAGE_BINARY + "' " + args, &r.out);
  return r;
}

TEST(Cli, UnknownSubcommandIsNamedWithTheClosestOne) {
  CliRun r = Lineage("srve");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("unknown subcommand 'srve'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'serve'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("A subcommand is required"), std::string::npos) << r.out;
}

TEST(Cli, VersionFlagPrintsTheVersion) {
  CliRun flag = Lineage("--version");
  CliRun sub = Lineage("version");
  EXPECT_EQ(flag.code, 0) << flag.out;
  EXPECT_EQ(flag.out.rfind("lineage ", 0), 0u) << flag.out;
  EXPECT_EQ(flag.out, sub.out);
}

TEST(Cli, UnknownFlagIsNamedBeforeAnyValue) {
  CliRun r = Lineage("serve -m nowhere.gguf --bogus 3");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("unknown option '--bogus'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("3 --bogus"), std::string::npos) << r.out;
}

TEST(Cli, BadNumbersAreRejectedBeforeLoadingAnything) {
  for (const char* args : {"serve -m nowhere.gguf --threads -3", "serve -m nowhere.gguf --port 99999",
                           "serve -m nowhere.gguf --port -1", "serve -m nowhere.gguf -n -2",
                           "serve -m nowhere.gguf --parallel 0", "serve -m nowhere.gguf --api-key ''",
                           "serve -m nowhere.gguf --api-key 'a b'", "generate -m nowhere.gguf --prompt x -n -5",
                           "generate -m nowhere.gguf --prompt x -n 9223372036854775808",
                           "generate -m nowhere.gguf --prompt x --top-p 2",
                           "generate -m nowhere.gguf --prompt x --isa avx3", "bench --model nowhere.gguf --isa sse"}) {
    CliRun r = Lineage(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(r.out.find("loading model"), std::string::npos) << args << ": " << r.out;
    EXPECT_NE(r.out.find("--"), std::string::npos) << args << ": " << r.out;  // names the option
  }
}

class CliServe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_cli_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::filesystem::path dir_;
  static std::string path_;
};
std::filesystem::path CliServe::dir_;
std::string CliServe::path_;

TEST_F(CliServe, ABusyPortFailsWithAClearErrorAndClampedContextIsSaid) {
  // Something listens on the port: serve must exit non-zero instead of sharing it.
  testing::FakeBackend backend;
  ServerOptions o;
  o.port = 0;
  o.log_requests = false;
  HttpServer busy(&backend, o);
  ASSERT_TRUE(busy.Start().ok());
  CliRun r = Lineage("serve -m '" + path_ + "' --port " + std::to_string(busy.port()) + " --ctx-size 100000000 -t 1");
  busy.Stop();
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("cannot bind 127.0.0.1:" + std::to_string(busy.port())), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in use"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" ready in "), std::string::npos) << r.out;
  // The context was above the model's: clamped, and said so.
  EXPECT_NE(r.out.find("--ctx-size 100000000 is above the model's context"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lineage::server
