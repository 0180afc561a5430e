// Chat-template rendering speed: parse once, render conversations of 20 and
// 200 messages (system, tools, user turns, assistant turns with reasoning and
// tool calls, tool results) with the real Qwen3.5 template, and with every
// template in the shared data directory at 200 messages.
//
//   build/bench_jinja [--benchmark_format=json]
// Target: a 200-message Qwen3.5 render well under 10 ms.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "text/chat_template.h"

namespace {

namespace fs = std::filesystem;
using J = nlohmann::ordered_json;
using lineage::ChatRequest;
using lineage::ChatTemplate;

fs::path SourceDir() { return fs::path(__FILE__).parent_path().parent_path(); }

fs::path TemplateDir() {
  if (const char* env = std::getenv("LINEAGE_SHARED_DATA")) return fs::path(env) / "templates";
  return SourceDir().parent_path() / "shared" / "data" / "templates";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

J Tools() {
  J tools = J::array();
  for (int k = 0; k < 4; ++k) {
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", "tool_" + std::to_string(k)},
                       {"description", "Does thing number " + std::to_string(k) + " to a file."},
                       {"parameters",
                        {{"type", "object"},
                         {"properties",
                          {{"path", {{"type", "string"}, {"description", "File path"}}},
                           {"lines", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                           {"options", {{"type", "object"}, {"properties", {{"force", {{"type", "boolean"}}}}}}}}},
                         {"required", {"path"}}}}}}});
  }
  return tools;
}

// An agent-shaped conversation: system, then rounds of user -> assistant
// tool call -> tool result -> assistant answer.
ChatRequest Conversation(int num_messages) {
  ChatRequest r;
  r.tools = Tools();
  r.messages.push_back({{"role", "system"}, {"content", "You are a coding agent. Work carefully and explain briefly."}});
  int k = 0;
  while (static_cast<int>(r.messages.size()) < num_messages) {
    std::string n = std::to_string(k++);
    r.messages.push_back({{"role", "user"}, {"content", "Please fix bug " + n + " in src/module_" + n + ".cpp; tests fail."}});
    r.messages.push_back({{"role", "assistant"},
                          {"content", "I will read the file first."},
                          {"reasoning_content", "The bug is probably in the loop bounds of module " + n + "."},
                          {"tool_calls",
                           {{{"id", "call" + n},
                             {"type", "function"},
                             {"function",
                              {{"name", "tool_1"},
                               {"arguments", {{"path", "src/module_" + n + ".cpp"}, {"lines", {1, 2, 3}}}}}}}}}});
    r.messages.push_back({{"role", "tool"},
                          {"tool_call_id", "call" + n},
                          {"content", "int main() {\n  for (int i = 0; i <= n; ++i) { sum += a[i]; }\n}\n"}});
    r.messages.push_back({{"role", "assistant"}, {"content", "Fixed: the loop ran one past the end. Tests pass now."}});
  }
  while (static_cast<int>(r.messages.size()) > num_messages) r.messages.erase(r.messages.size() - 1);
  if (r.messages.back()["role"] != "user") r.messages.push_back({{"role", "user"}, {"content", "Next task, please."}});
  return r;
}

std::string Commit() {
  std::string cmd = "git -C " + SourceDir().string() + " rev-parse --short HEAD 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[64];
    while (fgets(buf, sizeof(buf), p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.empty() ? "unknown" : out;
}

void BM_ParseQwen35(benchmark::State& state) {
  std::string src = ReadFile(TemplateDir() / "Qwen3.5-4B.jinja");
  if (src.empty()) return state.SkipWithError("Qwen3.5-4B.jinja not found");
  for (auto _ : state) {
    auto t = ChatTemplate::Create(src, "", "");
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ParseQwen35)->Unit(benchmark::kMicrosecond);

void BM_RenderQwen35(benchmark::State& state) {
  std::string src = ReadFile(TemplateDir() / "Qwen3.5-4B.jinja");
  if (src.empty()) return state.SkipWithError("Qwen3.5-4B.jinja not found");
  auto t = ChatTemplate::Create(src, "", "");
  ChatRequest r = Conversation(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    auto text = t->Apply(r);
    if (!text.ok()) return state.SkipWithError(text.status().ToString().c_str());
    bytes = text->size();
  }
  state.counters["messages"] = static_cast<double>(r.messages.size());
  state.counters["output_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderQwen35)->Arg(20)->Arg(200)->Unit(benchmark::kMicrosecond);

void BM_HistoryEndQwen35(benchmark::State& state) {
  std::string src = ReadFile(TemplateDir() / "Qwen3.5-4B.jinja");
  if (src.empty()) return state.SkipWithError("Qwen3.5-4B.jinja not found");
  auto t = ChatTemplate::Create(src, "", "");
  ChatRequest r = Conversation(200);
  for (auto _ : state) benchmark::DoNotOptimize(t->HistoryEnd(r));
}
BENCHMARK(BM_HistoryEndQwen35)->Unit(benchmark::kMicrosecond);

void BM_RenderEveryTemplate(benchmark::State& state, std::string path) {
  auto t = ChatTemplate::Create(ReadFile(path), "<s>", "</s>");
  if (!t.ok()) return state.SkipWithError(t.status().ToString().c_str());
  ChatRequest r = Conversation(200);
  auto first = t->Apply(r);
  if (!first.ok()) return state.SkipWithError(("template refuses the conversation: " + first.status().message()).c_str());
  for (auto _ : state) benchmark::DoNotOptimize(t->Apply(r));
  state.counters["output_bytes"] = static_cast<double>(first->size());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("commit", Commit());
#ifdef NDEBUG
  benchmark::AddCustomContext("build", "release");
#else
  benchmark::AddCustomContext("build", "debug");
#endif
  if (fs::is_directory(TemplateDir())) {
    for (const auto& e : fs::directory_iterator(TemplateDir())) {
      if (e.path().extension() != ".jinja") continue;
      benchmark::RegisterBenchmark(("BM_Render200/" + e.path().stem().string()).c_str(), BM_RenderEveryTemplate,
                                   e.path().string())
          ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
