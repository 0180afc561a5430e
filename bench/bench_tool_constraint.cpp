// Constrained sampling cost on the real-size vocabulary: builds the synthetic
// Qwen3.5 vocabulary (248320 tokens), the constraint's trie and plain-text
// split, then replays realistic replies token by token (teacher forcing: the
// reply's own tokens are accepted) and times the mask computed before each
// token, for Qwen3.5's XML calls and Qwen3's JSON calls. Each reply carries
// text values with '<' in them, which leave the plain-text fast path for the
// full walk. Also times applying the mask to a row of logits, and, at one
// state, the brute-force check of every token that the trie walk replaces.
// Prints the machine, build and commit, a table, then one JSON line.
//
// Usage: bench_tool_constraint [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_machine.h"
#include "server/tools/token_constraint.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"

using namespace lineage;
using namespace lineage::server;
using lineage::bench::Shell;

namespace {

using Clock = std::chrono::steady_clock;
double Us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

nlohmann::ordered_json Tools() {
  using json = nlohmann::ordered_json;
  json write = {{"type", "function"},
                {"function",
                 {{"name", "write_file"},
                  {"parameters",
                   {{"type", "object"},
                    {"properties", {{"path", {{"type", "string"}}}, {"content", {{"type", "string"}}},
                                    {"mode", {{"type", "integer"}}}, {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
                    {"required", {"path", "content"}}}}}}};
  json shell = {{"type", "function"},
                {"function", {{"name", "run_shell"}, {"parameters", {{"type", "object"}, {"properties", {{"command", {{"type", "string"}}}}}}}}}};
  return json::array({write, shell});
}

const char* kContent =
    "#include <vector>\nint main() {\n  std::vector<int> v = {1, 2, 3};\n  for (int i = 0; i < 3; ++i) v[i] *= 2;\n"
    "  // \xe4\xb8\xad\xe6\x96\x87 comment: sizes in bytes\n  return v.size() > 2 ? 0 : 1;\n}\n";

struct Figures {
  std::vector<double> mask_us;
  int64_t full_walks = 0;
};

Figures Replay(const text::Tokenizer& tok, std::shared_ptr<const TokenConstraintVocab> vocab, ToolCallFormat format,
               const std::string& reply, int repeats) {
  ToolGrammarOptions o;
  o.format = format;
  o.reasoning_open = format == ToolCallFormat::kXml;
  o.max_calls = 2;
  auto g = ToolGrammar::Compile(Tools(), {}, o);
  if (!g.ok()) {
    std::fprintf(stderr, "grammar: %s\n", g.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<int32_t> tokens = tok.Encode(reply, {.parse_special = true});
  tokens.push_back(tok.eos_id());
  Figures f;
  for (int r = 0; r < repeats; ++r) {
    TokenConstraint c(*g, vocab);
    for (int32_t id : tokens) {
      bool full = c.matcher().text_state().kind == TextState::Kind::kNone;
      auto t0 = Clock::now();
      Status st = c.ComputeMask();
      auto t1 = Clock::now();
      if (!st.ok() || !c.Accept(id).ok()) {
        std::fprintf(stderr, "the reply leaves the grammar at token %d '%s'\n", id, std::string(tok.TokenBytes(id)).c_str());
        std::exit(1);
      }
      f.mask_us.push_back(Us(t0, t1));
      if (r == 0) f.full_walks += full;
    }
  }
  return f;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}
double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::string src_dir = std::filesystem::path(__FILE__).parent_path().string();
  std::string commit = bench::CommitOf(src_dir);
  std::printf("bench_tool_constraint  cpu: %s  cores:%u  build:%s  commit:%s\n", bench::CpuModel().c_str(),
              std::thread::hardware_concurrency(), bench::BuildType(), commit.c_str());
  std::printf("%s\n", Shell("uptime").c_str());

  auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(248320, text::VocabFlavour::kQwen35, 1));
  if (!tok.ok()) return 1;
  auto t0 = Clock::now();
  auto vocab = TokenConstraintVocab::Build(*tok);
  double build_ms = Us(t0, Clock::now()) / 1000;
  std::printf("vocabulary 248320 tokens: trie %zu nodes, plain in JSON strings %zu, plain in text %zu; built in %.0f ms\n\n",
              vocab->all().nodes.size(), vocab->json_string().plain.size(), vocab->raw_text().plain.size(), build_ms);

  std::string content = kContent;
  std::string xml = "\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.cc\n</parameter>\n"
                    "<parameter=content>\n" + content + "\n</parameter>\n<parameter=mode>\n420\n</parameter>\n"
                    "</function>\n</tool_call>\n<tool_call>\n<function=run_shell>\n<parameter=command>\nmake -j2 && ./main\n"
                    "</parameter>\n</function>\n</tool_call>";
  nlohmann::ordered_json args = {{"path", "src/main.cc"}, {"content", content}, {"mode", 420}, {"tags", {"a", "b"}}};
  std::string escaped = args.dump();
  for (size_t p = 0; (p = escaped.find("</", p)) != std::string::npos;) escaped.replace(p, 2, "<\\/");
  std::string jsonr = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": " + escaped + "}\n</tool_call>";

  std::printf("mask time per token (us), %d replays of each reply\n", repeats);
  std::printf("%-10s %8s %11s %10s %10s %10s %10s\n", "format", "tokens", "full walks", "mean", "p50", "p99", "max");
  std::string out = "{\"bench\":\"tool_constraint\",\"commit\":\"" + commit + "\",\"vocab\":248320,\"build_ms\":" +
                    std::to_string(build_ms) + ",\"results\":[";
  bool first = true;
  for (auto [name, format, reply] : {std::tuple{"xml", ToolCallFormat::kXml, xml}, std::tuple{"json", ToolCallFormat::kJson, jsonr}}) {
    Figures f = Replay(*tok, vocab, format, reply, repeats);
    size_t n = f.mask_us.size() / repeats;
    std::printf("%-10s %8zu %11lld %10.1f %10.1f %10.1f %10.1f\n", name, n, static_cast<long long>(f.full_walks),
                Mean(f.mask_us), Percentile(f.mask_us, 0.5), Percentile(f.mask_us, 0.99),
                *std::max_element(f.mask_us.begin(), f.mask_us.end()));
    out += std::string(first ? "" : ",") + "{\"format\":\"" + name + "\",\"tokens\":" + std::to_string(n) +
           ",\"mean_us\":" + std::to_string(Mean(f.mask_us)) + ",\"p50_us\":" + std::to_string(Percentile(f.mask_us, 0.5)) +
           ",\"p99_us\":" + std::to_string(Percentile(f.mask_us, 0.99)) + "}";
    first = false;
  }

  // Applying a mask to one row of logits, and the brute-force mask it replaces.
  ToolGrammarOptions o;
  auto g = ToolGrammar::Compile(Tools(), {}, o);
  TokenConstraint c(*g, vocab);
  (void)c.ComputeMask();
  std::vector<float> logits(248320, 0.5f), masked;
  auto a0 = Clock::now();
  for (int i = 0; i < 20; ++i) c.Apply(logits, &masked);
  double apply_us = Us(a0, Clock::now()) / 20;
  auto b0 = Clock::now();
  int64_t allowed = 0;
  for (int32_t id = 0; id < tok->vocab_size(); ++id) {
    ToolMatcher m = c.matcher();
    allowed += !vocab->bytes(id).empty() && m.Advance(vocab->bytes(id));
  }
  double brute_us = Us(b0, Clock::now());
  auto w0 = Clock::now();
  (void)c.ComputeMask();
  double walk_us = Us(w0, Clock::now());
  std::printf("\napply mask to 248320 logits: %.1f us; at the reply's start the trie walk takes %.1f us, "
              "checking every token %.1f us (%lld allowed)\n", apply_us, walk_us, brute_us, static_cast<long long>(allowed));
  out += "],\"apply_us\":" + std::to_string(apply_us) + ",\"start_walk_us\":" + std::to_string(walk_us) +
         ",\"start_brute_force_us\":" + std::to_string(brute_us) + "}";
  std::printf("%s\n", out.c_str());
  return 0;
}
