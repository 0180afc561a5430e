// End-to-end on Kimi Linear: a random-weight tiny kimi_linear model in the
// Hugging Face form the real repository ships (safetensors, tiktoken.model,
// tokenizer_config.json with Kimi's chat template and special tokens) behind
// the HTTP server. Requests with tools through the OpenAI and Anthropic APIs
// render through Kimi's template, and a new session with the same system
// prompt and tools restores at the anchor, whose length is computed here
// from the template and the tokenizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "e2e_stack.h"
#include "expected_restore.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class KimiEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_kimi_e2e_" + std::to_string(::getpid()));
    auto spec = model::LookupShape(model::Arch::kKimiLinear, "tiny");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    model::VocabData vocab = text::MakeSyntheticVocab(spec->config.vocab, text::VocabFlavour::kKimi, 1);
    vocab.chat_template = model::ChatTemplateFor(model::Arch::kKimiLinear);
    model::WriteOptions o;
    o.format = model::FileFormat::kSafetensors;
    o.dtype = DType::kF32;
    o.seed = 5;
    path_ = (dir_ / "tiny-kimi").string();
    Status s = model::WriteModel(*spec, vocab, o, path_);
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
  static std::string SystemText() { return "You are a careful coding agent. Follow the house style."; }
  static json Conversation(const std::string& user) {
    return json::array({{{"role", "system"}, {"content", SystemText()}}, {{"role", "user"}, {"content", user}}});
  }
  static json Request(const json& messages) {
    return {{"messages", messages}, {"tools", Tools()}, {"max_tokens", 6}, {"temperature", 0}};
  }
  static int64_t Cached(const json& r) { return r["usage"]["prompt_tokens_details"]["cached_tokens"]; }

  static text::Tokenizer Tok() {
    auto tok = text::LoadTokenizer(path_);
    EXPECT_TRUE(tok.ok()) << tok.status().ToString();
    return *tok;
  }
  static std::vector<int32_t> PromptTokens(const json& messages) {
    return testing::ConversationTokens(path_, messages, Tools(), true);
  }

  static std::filesystem::path dir_;
  static std::string path_;
};

std::filesystem::path KimiEndToEnd::dir_;
std::string KimiEndToEnd::path_;

TEST_F(KimiEndToEnd, TheDirectoryIsKimisOwnForm) {
  EXPECT_TRUE(std::filesystem::exists(path_ + "/tiktoken.model"));
  EXPECT_FALSE(std::filesystem::exists(path_ + "/tokenizer.json"));
  text::Tokenizer tok = Tok();
  EXPECT_EQ(tok.chat_template(), model::ChatTemplateFor(model::Arch::kKimiLinear));
  // The prompt is Kimi's: the tools turn and the roles are single special tokens.
  const std::vector<int32_t> ids = PromptTokens(Conversation("hello"));
  for (const char* special : {"<|im_system|>", "<|im_middle|>", "<|im_user|>", "<|im_end|>", "<|im_assistant|>"}) {
    auto one = tok.Encode(special, {.parse_special = true});
    ASSERT_EQ(one.size(), 1u) << special;
    EXPECT_NE(std::find(ids.begin(), ids.end(), one[0]), ids.end()) << special;
  }
}

TEST_F(KimiEndToEnd, ChatWithToolsThenANewSessionRestoresAtTheAnchor) {
  auto s = Start();
  const json first = Conversation("Open the README and summarise it.");
  json r1 = testing::PostJson(*s, "/v1/chat/completions", Request(first));
  EXPECT_EQ(Cached(r1), 0);
  EXPECT_EQ(r1["usage"]["prompt_tokens"].get<int64_t>(), static_cast<int64_t>(PromptTokens(first).size()));
  EXPECT_GT(r1["usage"]["completion_tokens"].get<int64_t>(), 0);

  const json other = Conversation("Fix the failing test in tests/core.");
  json r2 = testing::PostJson(*s, "/v1/chat/completions", Request(other));
  EXPECT_EQ(Cached(r2), testing::AnchorTokens(path_, other, Tools()));
  EXPECT_GT(Cached(r2), 40);  // the tools turn alone is longer than that
}

TEST_F(KimiEndToEnd, AnthropicMessagesWithToolsReadTheAnchor) {
  auto s = Start();
  json tools = json::array({{{"name", "read_file"},
                             {"description", "Read a file from the workspace"},
                             {"input_schema", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}});
  auto body = [&](const std::string& user) {
    return json{{"max_tokens", 6},
                {"temperature", 0},
                {"system", SystemText()},
                {"tools", tools},
                {"messages", {{{"role", "user"}, {"content", user}}}}};
  };
  json a = testing::PostJson(*s, "/v1/messages", body("hello"));
  EXPECT_EQ(a["type"], "message");
  EXPECT_EQ(a["usage"]["cache_read_input_tokens"].get<int64_t>(), 0);
  json b = testing::PostJson(*s, "/v1/messages", body("list the files"));
  EXPECT_GT(b["usage"]["cache_read_input_tokens"].get<int64_t>(), 40);
}

}  // namespace
}  // namespace lineage::server
