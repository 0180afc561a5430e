// A real server for end-to-end tests: a model file with its own tokenizer
// and chat template, behind EngineBackend and HttpServer on a free port of
// 127.0.0.1, and a JSON POST to it. Set LINEAGE_TEST_LOG to see the
// server's request log.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/chat_templates.h"
#include "model/load_model.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "server/generation/engine_backend.h"
#include "server/http_server.h"
#include "tools/synthetic_vocab.h"

namespace lineage::server::testing {

// Writes a random-weight tiny model of `arch` as GGUF, with its synthetic
// vocabulary and the architecture's chat template.
inline Status WriteTinyModel(model::Arch arch, const std::string& path, uint64_t seed, bool mtp = false) {
  LINEAGE_ASSIGN_OR_RETURN(auto spec, model::LookupShape(arch, "tiny"));
  if (mtp) spec.config.mtp_layers = 1;  // an MTP block after the trunk, as `mkmodel --mtp` writes
  model::VocabData vocab = text::MakeSyntheticVocab(spec.config.vocab, text::VocabFlavourFor(arch), 1);
  vocab.chat_template = model::ChatTemplateFor(arch);
  model::WriteOptions o;
  o.format = model::FileFormat::kGguf;
  o.dtype = DType::kF32;
  o.seed = seed;
  return model::WriteModel(spec, vocab, o, path);
}

// Writes the random-weight tiny Qwen3.5 (GGUF, f32, seed 1) with a synthetic
// vocabulary and the real Qwen3.5 chat template as dir/tiny.gguf.
inline std::string WriteTinyQwen35(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string path = (dir / "tiny.gguf").string();
  Status st = WriteTinyModel(model::Arch::kQwen3_5, path, 1);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return path;
}

// The tiny Qwen3.5 (XML tool calls) and Qwen3 (JSON calls) models, written
// into a directory of their own and removed with it: for suites that run
// once per architecture.
class TinyQwenPair {
 public:
  TinyQwenPair(const std::string& name, uint64_t seed)
      : dir_(std::filesystem::temp_directory_path() / ("lineage_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    for (model::Arch arch : {model::Arch::kQwen3_5, model::Arch::kQwen3}) {
      Status st = WriteTinyModel(arch, Path(arch), seed);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  }
  ~TinyQwenPair() { std::filesystem::remove_all(dir_); }
  std::string Path(model::Arch arch) const {
    return (dir_ / (arch == model::Arch::kQwen3_5 ? "qwen35.gguf" : "qwen3.gguf")).string();
  }

 private:
  std::filesystem::path dir_;
};

struct Stack {
  std::unique_ptr<EngineBackend> backend;
  std::unique_ptr<HttpServer> http;
  ~Stack() {
    if (http) http->Stop();
  }
};

inline std::unique_ptr<Stack> StartStack(const std::string& model_path, const EngineBackendOptions& options,
                                         ServerOptions so = {}) {
  auto stack = std::make_unique<Stack>();
  auto m = model::LoadModel(model_path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  auto tok = text::LoadTokenizer(model_path);
  EXPECT_TRUE(tok.ok());
  auto tmpl = ChatTemplate::Create(tok->chat_template(), "", "<|im_end|>");
  EXPECT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  auto backend = EngineBackend::Create(*m, *tok, std::move(tmpl).value(), options);
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  stack->backend = std::move(backend).value();
  so.port = 0;
  // A caller's log sink gets every line; otherwise the log is on when asked.
  so.log_requests = so.log_sink || std::getenv("LINEAGE_TEST_LOG") != nullptr;
  stack->http = std::make_unique<HttpServer>(stack->backend.get(), so);
  EXPECT_TRUE(stack->http->Start().ok());
  return stack;
}

// The response body as JSON; a status other than 200 fails the test unless
// `status` asks for it. The timeout is generous: a 46k-token prefill on a
// loaded machine takes minutes.
inline nlohmann::ordered_json PostJson(Stack& s, const std::string& path, const nlohmann::ordered_json& body,
                                       int* status = nullptr, int timeout_s = 300) {
  httplib::Client c("127.0.0.1", s.http->port());
  c.set_read_timeout(timeout_s, 0);
  auto res = c.Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(res);
  if (!res) return {};
  if (status) *status = res->status;
  else EXPECT_EQ(res->status, 200) << res->body;
  return nlohmann::ordered_json::parse(res->body);  // throws on invalid UTF-8: the test would fail
}

// The cache's live leases once the scheduler has let go (up to 5 s): 0 when
// every sequence of the requests that ended was released.
inline int64_t LiveLeasesAfterSettling(Stack& s) {
  int64_t leases = -1;
  for (int i = 0; i < 500; ++i) {
    leases = s.backend->cache().Stats().live_leases;
    if (leases == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return leases;
}

// A POST of a JSON body, for clients that read the response themselves
// (httplib::Request::content_receiver) and may leave early.
inline httplib::Request JsonPost(const std::string& path, const nlohmann::ordered_json& body) {
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  return req;
}

// The value of a counter on the server's /metrics page, or -1 when absent.
inline int64_t MetricCounter(Stack& s, const std::string& name) {
  httplib::Client c("127.0.0.1", s.http->port());
  auto res = c.Get("/metrics");
  EXPECT_TRUE(res);
  std::smatch m;
  const std::string body = res ? res->body : "";
  if (!std::regex_search(body, m, std::regex("\n" + name + " ([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

// A greedy /v1/completions body of a prompt that repeats itself (so prompt
// lookup has something to draft), with `extra`'s fields on top.
inline nlohmann::ordered_json RepeatingCompletion(const nlohmann::ordered_json& extra, int64_t max_tokens) {
  nlohmann::ordered_json body = {{"prompt", "The build failed because the build failed because"},
                                 {"max_tokens", max_tokens}, {"temperature", 0}};
  for (auto& [k, v] : extra.items()) body[k] = v;
  return body;
}

inline std::string CompletionText(const nlohmann::ordered_json& r) { return r["choices"][0]["text"]; }

// Each completion body posted alone with speculative.type "none", then all of
// them at once as given (one decode step runs them together): the texts of
// both, in order.
inline std::pair<std::vector<std::string>, std::vector<std::string>> AloneAndTogether(
    Stack& s, const std::vector<nlohmann::ordered_json>& bodies) {
  std::vector<std::string> alone, together(bodies.size());
  for (nlohmann::ordered_json b : bodies) {
    b["speculative.type"] = "none";
    alone.push_back(CompletionText(PostJson(s, "/v1/completions", b)));
  }
  std::vector<std::thread> clients;
  for (size_t i = 0; i < bodies.size(); ++i)
    clients.emplace_back([&, i] { together[i] = CompletionText(PostJson(s, "/v1/completions", bodies[i])); });
  for (std::thread& t : clients) t.join();
  return {alone, together};
}

// A chat reply's message without its tool call ids (random per reply).
inline nlohmann::ordered_json WithoutCallIds(nlohmann::ordered_json message) {
  for (auto& call : message["tool_calls"]) call.erase("id");
  return message;
}

// A TCP port of 127.0.0.1 free at the time of the call (for a child process
// to bind; another process could take it first, which the caller then sees).
inline int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

}  // namespace lineage::server::testing
