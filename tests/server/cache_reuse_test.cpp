// Chunk reuse (--cache-reuse) end to end: the real engine, tokenizer, chat
// template and cache behind the HTTP server, on a random-weight tiny Qwen3
// (attention-only) model. Turn 2 deletes a message pair from the middle of
// turn 1's conversation; the expected cached_tokens are computed here from the
// rendered token ids with the naive matcher, never read back from the server.
#include <gtest/gtest.h>

#include <filesystem>

#include "cache/chunk_match_naive.h"
#include "http_test_util.h"
#include "tools/chat_templates.h"
#include "model/load_model.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "server/generation/engine_backend.h"
#include "server/http_server.h"
#include "tools/synthetic_vocab.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

class CacheReuse : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_reuse_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (model::Arch arch : {model::Arch::kQwen3, model::Arch::kQwen3_5}) {
      auto spec = model::LookupShape(arch, "tiny");
      ASSERT_TRUE(spec.ok()) << spec.status().ToString();
      model::VocabData vocab = text::MakeSyntheticVocab(
          spec->config.vocab, arch == model::Arch::kQwen3 ? text::VocabFlavour::kQwen3 : text::VocabFlavour::kQwen35, 1);
      vocab.chat_template = model::ChatTemplateFor(arch);
      model::WriteOptions o;
      o.format = model::FileFormat::kGguf;
      o.dtype = DType::kF32;
      o.seed = 3;
      const std::string path = (dir_ / (std::string(model::ArchName(arch)) + ".gguf")).string();
      ASSERT_TRUE(model::WriteModel(*spec, vocab, o, path).ok());
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string PathOf(model::Arch arch) { return (dir_ / (std::string(model::ArchName(arch)) + ".gguf")).string(); }

  struct Server {
    std::unique_ptr<EngineBackend> backend;
    std::unique_ptr<HttpServer> http;
    ~Server() {
      if (http) http->Stop();
    }
  };

  static Result<std::unique_ptr<Server>> Start(model::Arch arch, int64_t cache_reuse) {
    auto m = model::LoadModel(PathOf(arch));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    auto tok = text::LoadTokenizer(PathOf(arch));
    EXPECT_TRUE(tok.ok());
    auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
    EXPECT_TRUE(tmpl.ok()) << tmpl.status().ToString();
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.prefill_chunk_tokens = 64;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    bo.cache_reuse_min_tokens = cache_reuse;
    LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<EngineBackend> backend,
                             EngineBackend::Create(*m, *tok, std::move(tmpl).value(), bo));
    auto s = std::make_unique<Server>();
    s->backend = std::move(backend);
    ServerOptions so;
    so.port = 0;
    so.log_requests = std::getenv("LINEAGE_TEST_LOG") != nullptr;
    s->http = std::make_unique<HttpServer>(s->backend.get(), so);
    EXPECT_TRUE(s->http->Start().ok());
    return s;
  }

  static json Chat(Server& s, const json& messages) {
    httplib::Client c("127.0.0.1", s.http->port());
    c.set_read_timeout(60, 0);
    json body = {{"messages", messages}, {"max_tokens", 6}, {"temperature", 0}};
    auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body);
  }
  static int64_t Cached(const json& r) { return r["usage"]["prompt_tokens_details"]["cached_tokens"]; }

  // The prompt's token ids as the server builds them.
  static std::vector<int32_t> PromptTokens(const json& messages) {
    auto tok = text::LoadTokenizer(PathOf(model::Arch::kQwen3));
    auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
    ChatRequest r;
    r.messages = messages;
    r.add_generation_prompt = true;
    auto text = tmpl->Apply(r);
    EXPECT_TRUE(text.ok());
    return tok->Encode(*text, {.parse_special = true});
  }

  // Turn 1: system, a question, an answer, a long tool result with its
  // answer, and the current question. Turn 2: the same without the tool
  // result pair in the middle (a client trimming an old tool output).
  static json Turn1() {
    return json::array(
        {{{"role", "system"}, {"content", "You are a careful coding agent working in a small C++ repository."}},
         {{"role", "user"}, {"content", "Which build system does the project use?"}},
         {{"role", "assistant"}, {"content", "It uses CMake with Ninja, driven by a short Makefile."}},
         {{"role", "user"},
          {"content", "Tool output of cat src/core/status.h: namespace lineage { enum class StatusCode { kOk, "
                      "kInvalidArgument, kNotFound, kCorrupt, kUnsupported, kIoError }; class Status { public: "
                      "bool ok() const; StatusCode code() const; std::string message() const; }; }"}},
         {{"role", "assistant"}, {"content", "Errors are values carried by Status and Result."}},
         {{"role", "user"},
          {"content", "Now explain, step by step and with the names of the functions involved, how a request "
                      "travels from the HTTP handler through the scheduler to the engine and back to the client, "
                      "and where the prompt cache is consulted on the way."}}});
  }
  static json Turn2() {
    json t = Turn1();
    t.erase(t.begin() + 3, t.begin() + 5);
    return t;
  }

  static std::filesystem::path dir_;
};

std::filesystem::path CacheReuse::dir_;

int64_t CommonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return static_cast<int64_t>(n);
}

TEST_F(CacheReuse, DeletedMiddleMessageReusesTheTailByShifting) {
  const std::vector<int32_t> p1 = PromptTokens(Turn1()), p2 = PromptTokens(Turn2());
  const auto m2 = static_cast<int64_t>(p2.size());
  const int64_t prefix = std::min(CommonPrefix(p1, p2), m2 - 1);
  // Independent expectation: runs of >= 16 tokens of turn 2 after the common
  // prefix found in turn 1's prompt after it, at most m - 1 restored in all.
  // (The stored sequence also holds turn 1's reply after its prompt; turn 2
  // ends where turn 1's prompt does, so the walk never reaches the reply.)
  const auto chunks = cache::testing::NaiveChunks(std::vector<int32_t>(p2.begin() + prefix, p2.end()),
                                                  std::vector<int32_t>(p1.begin() + prefix, p1.end()), 16);
  int64_t reused = 0;
  for (const auto& c : chunks) reused += c.len;
  reused = std::min(reused, m2 - 1 - prefix);
  ASSERT_GT(reused, 16) << "the test conversation must leave a tail to reuse";

  auto with = Start(model::Arch::kQwen3, 16);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  json t1 = Chat(**with, Turn1());
  EXPECT_EQ(Cached(t1), 0);
  json t2 = Chat(**with, Turn2());
  EXPECT_EQ(t2["usage"]["prompt_tokens"], m2);
  EXPECT_EQ(Cached(t2), prefix + reused);
  EXPECT_GT(Cached(t2), prefix);
  EXPECT_EQ(t2["choices"][0]["finish_reason"], "length");  // it decoded its 6 tokens
  EXPECT_EQ(t2["usage"]["completion_tokens"], 6);

  httplib::Client c("127.0.0.1", (*with)->http->port());
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("lineage_reused_tokens_total " + std::to_string(reused)), std::string::npos)
      << metrics->body;

  // Without the flag: the common prefix only.
  auto without = Start(model::Arch::kQwen3, 0);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  Chat(**without, Turn1());
  json plain = Chat(**without, Turn2());
  EXPECT_EQ(Cached(plain), prefix);
}

TEST_F(CacheReuse, AHybridModelIsRefused) {
  auto hybrid = Start(model::Arch::kQwen3_5, 16);
  ASSERT_FALSE(hybrid.ok());
  EXPECT_EQ(hybrid.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(hybrid.status().message().find("attention-only"), std::string::npos);
  EXPECT_TRUE(Start(model::Arch::kQwen3_5, 0).ok());
}

}  // namespace
}  // namespace lineage::server
