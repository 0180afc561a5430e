// End-to-end on the model the cache was designed for: a random-weight tiny
// kda_dsa (KDA layers, sparse latent layers with the lightning indexer whose
// top_k of 16 drops keys from the 17th token on, the DeepSeek MoE) as GGUF
// behind the HTTP server. A conversation's second turn restores its first
// (latent rows, indexer keys and KDA state together), a new session with the
// same system prompt and tools restores at the anchor, and each restored
// reply equals the reply of a server that computed the prompt cold.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"
#include "expected_restore.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class SparseEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_sparse_e2e_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "tiny-kda-dsa.gguf").string();
    Status s = testing::WriteTinyModel(model::Arch::kKdaDsa, path_, 3);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Stack> Start() {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.max_live = 4;
    bo.scheduler.prefill_chunk_tokens = 48;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    return testing::StartStack(path_, bo);
  }

  static json Tools() { return testing::ReadFileTool(); }
  static json Conversation(const std::string& user) {
    return json::array({{{"role", "system"}, {"content", "You are a careful coding agent. Follow the house style."}},
                        {{"role", "user"}, {"content", user}}});
  }
  static json Request(const json& messages) {
    return {{"messages", messages}, {"tools", Tools()}, {"max_tokens", 8}, {"temperature", 0}};
  }
  static int64_t Cached(const json& r) { return r["usage"]["prompt_tokens_details"]["cached_tokens"]; }
  static std::string Reply(const json& r) { return r["choices"][0]["message"].dump(); }

  static std::filesystem::path dir_;
  static std::string path_;
};

std::filesystem::path SparseEndToEnd::dir_;
std::string SparseEndToEnd::path_;

TEST_F(SparseEndToEnd, RestoredTurnsEqualColdOnes) {
  auto s = Start();
  json first = Conversation("Open the README and summarise it.");
  json r1 = testing::PostJson(*s, "/v1/chat/completions", Request(first));
  ASSERT_TRUE(r1.contains("choices")) << r1.dump();
  EXPECT_EQ(Cached(r1), 0);
  EXPECT_GT(r1["usage"]["prompt_tokens"].get<int64_t>(), 64) << "the prompt must be past top_k";

  json second = first;
  second.push_back(r1["choices"][0]["message"]);
  second.push_back({{"role", "user"}, {"content", "Now list the files in src."}});
  json r2 = testing::PostJson(*s, "/v1/chat/completions", Request(second));
  EXPECT_GT(Cached(r2), r1["usage"]["prompt_tokens"].get<int64_t>() / 2) << "the second turn restores the first";

  json other = Conversation("Fix the failing test in tests/core.");
  json r3 = testing::PostJson(*s, "/v1/chat/completions", Request(other));
  EXPECT_EQ(Cached(r3), testing::AnchorTokens(path_, other, Tools()));

  // A server that has seen nothing computes both prompts cold.
  auto cold = Start();
  json c2 = testing::PostJson(*cold, "/v1/chat/completions", Request(second));
  EXPECT_EQ(Cached(c2), 0);
  EXPECT_EQ(Reply(c2), Reply(r2));
  auto cold3 = Start();
  json c3 = testing::PostJson(*cold3, "/v1/chat/completions", Request(other));
  EXPECT_EQ(Reply(c3), Reply(r3));
}

}  // namespace
}  // namespace lineage::server
