// Errors carry line:column, limits stop runaway templates, and malformed
// templates never crash.
#include <gtest/gtest.h>

#include <random>

#include "chat_cases.h"
#include "text/chat_template.h"
#include "text/jinja/template.h"

namespace lineage::jinja {
namespace {

struct ParseErrorCase {
  const char* source;
  const char* position;  // "line:column: "
  const char* words;     // must appear in the message
};

TEST(JinjaErrors, SyntaxErrorsReportLineAndColumn) {
  const ParseErrorCase cases[] = {
      {"Hello\n{% for x in y %}\n{{ x }}", "2:4: ", "'for' opened here was never closed"},
      {"{% if a %}x{% elif b %}y", "1:4: ", "'if' opened here was never closed"},
      {"{% macro m() %}body", "1:4: ", "'macro'"},
      {"{% set x %}unclosed", "1:4: ", "'set'"},
      {"line1\n  {{ x | nosuch(1) }}", "2:10: ", "no filter named 'nosuch'"},
      {"{% if x is nosuchtest %}{% endif %}", "1:12: ", "no test named 'nosuchtest'"},
      {"{{ 1 + }}", "1:8: ", "unexpected 'end of print statement'"},
      {"a\nb\n   {% endif %}", "3:7: ", "unknown tag 'endif'"},
      {"{% frobnicate %}", "1:4: ", "unknown tag 'frobnicate'"},
      {"{{ 'abc }}", "1:4: ", "unexpected end of string"},
      {"{{ x ]] }}", "1:6: ", "unexpected ']'"},
      {"\n\n{# never closed", "3:1: ", "missing end of comment tag"},
      {"{{ x", "1:1: ", "expected '}}'"},
      {"{% break %}", "1:4: ", "outside of a loop"},
      {"{{ x $ y }}", "1:6: ", "unexpected char '$'"},
      {"{% for in x %}{% endfor %}", "1:11: ", "expected 'in'"},
  };
  for (const auto& c : cases) {
    auto t = Template::Parse(c.source);
    ASSERT_FALSE(t.ok()) << c.source;
    const std::string& m = t.status().message();
    EXPECT_EQ(m.rfind(c.position, 0), 0u) << c.source << " -> " << m;
    EXPECT_NE(m.find(c.words), std::string::npos) << c.source << " -> " << m;
    EXPECT_NE(m.find("syntax error"), std::string::npos) << m;
  }
}

TEST(JinjaErrors, RuntimeErrorsReportLineAndColumn) {
  struct Case {
    const char* source;
    const char* position;
    const char* words;
  } cases[] = {
      {"a\n\n  {{ raise_exception('boom') }}", "3:6: ", "template raised: boom"},
      {"{% for m in messages %}\n{{ m.content.x.y }}{% endfor %}", "2:15: ", "undefined"},
      {"{{ 1 }}\n{{ 'a' + 2 }}", "2:8: ", "can only concatenate str"},
      {"{{ messages | tojson }}{{ nothing | tojson }}", "1:37: ", "not JSON serializable"},
      {"{{ messages.append(1) }}", "1:12: ", "unsafe"},
  };
  nlohmann::ordered_json ctx = {{"messages", {{{"content", "hi"}}}}};
  for (const auto& c : cases) {
    auto t = Template::Parse(c.source);
    ASSERT_TRUE(t.ok()) << c.source << ": " << t.status().ToString();
    auto r = t->Render(ctx);
    ASSERT_FALSE(r.ok()) << c.source;
    const std::string& m = r.status().message();
    EXPECT_EQ(m.rfind(c.position, 0), 0u) << c.source << " -> " << m;
    EXPECT_NE(m.find(c.words), std::string::npos) << c.source << " -> " << m;
  }
}

TEST(JinjaErrors, LimitsStopRunawayTemplates) {
  RenderOptions options;
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_loop_iterations = 200'000;
  struct Case {
    const char* source;
    const char* words;
  } cases[] = {
      {"{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", "recursion"},
      {"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}", "limit"},
      {"{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
       "limit"},
      {"{{ 'x' * 100000000000 }}", "too large"},
      {"{% set s = 'x' * 1000000 %}{{ s | replace('', s) }}", "too large"},
      {"{% set s = 'x' * 1000000 %}{{ s.replace('x', s) }}", "too large"},
      {"{% set ns = namespace(x=[]) %}{% for i in range(2000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
       "recursion depth"},
  };
  for (const auto& c : cases) {
    auto t = Template::Parse(c.source);
    ASSERT_TRUE(t.ok()) << c.source << ": " << t.status().ToString();
    auto r = t->Render(nlohmann::ordered_json::object(), options);
    ASSERT_FALSE(r.ok()) << c.source;
    EXPECT_NE(r.status().message().find(c.words), std::string::npos) << c.source << " -> " << r.status().ToString();
  }
  std::string deep(5000, '(');
  EXPECT_FALSE(Template::Parse("{{ " + deep + " }}").ok());
  std::string nested;
  for (int k = 0; k < 5000; ++k) nested += "{% if x %}";
  EXPECT_FALSE(Template::Parse(nested).ok());
  nlohmann::ordered_json deep_json = nlohmann::ordered_json::array();
  for (int k = 0; k < 2000; ++k) deep_json = nlohmann::ordered_json::array({deep_json});
  auto t = Template::Parse("{{ x | length }}");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->Render({{"x", deep_json}}).ok());
}

// Random edits of the real templates (deleted, duplicated and inserted
// characters) must parse or fail cleanly, and render or fail cleanly.
TEST(JinjaErrors, MutatedRealTemplatesNeverCrash) {
  std::vector<std::string> sources;
  for (const auto& [name, src] : lineage::testing::LoadRealTemplates()) sources.push_back(src);
  if (sources.empty()) GTEST_SKIP() << "no templates under " << lineage::testing::RealTemplateDir();
  auto cases = lineage::testing::MakeChatCases();
  std::mt19937 rng(1234);
  const char kAlphabet[] = "{}%#-+()[]|.,:'\"~=<>!*/ \n\tabcxyz019_";
  int parsed = 0, rendered = 0;
  const int kRounds = 1500;
  for (int round = 0; round < kRounds; ++round) {
    std::string src = sources[rng() % sources.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !src.empty(); ++e) {
      size_t at = rng() % src.size();
      switch (rng() % 3) {
        case 0: src.erase(at, 1 + rng() % 8); break;
        case 1: src.insert(at, src.substr(rng() % src.size(), rng() % 16)); break;
        default: src.insert(at, 1, kAlphabet[rng() % (sizeof(kAlphabet) - 1)]); break;
      }
    }
    auto ct = ChatTemplate::Create(src, "<s>", "</s>");
    if (!ct.ok()) {
      EXPECT_NE(ct.status().message().find(": syntax error: "), std::string::npos) << ct.status().ToString();
      continue;
    }
    ++parsed;
    auto r = ct->Apply(cases[rng() % cases.size()].request);
    rendered += r.ok();
  }
  std::printf("[ fuzz ] %d mutated templates: %d parsed, %d rendered\n", kRounds, parsed, rendered);
}

}  // namespace
}  // namespace lineage::jinja
