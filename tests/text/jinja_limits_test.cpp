// The template engine's limits: 64-bit integer results Python would give as
// big ints fail with a clear error (never a trap or a wrapped value); every
// value a render holds counts against its memory budget as it grows; deeply
// nested templates and values neither crash at parse, render nor
// destruction. Behaviour Python defines within 64 bits is checked against
// python3-jinja2 in jinja_snippets_test.cpp.
#include <gtest/gtest.h>

#include <pthread.h>

#include <chrono>
#include <string>

#include "text/jinja/template.h"

namespace lineage::jinja {
namespace {

using J = nlohmann::ordered_json;

Result<std::string> RenderSource(const std::string& source, const RenderOptions& options = {}) {
  auto t = Template::Parse(source);
  if (!t.ok()) return t.status();
  return t->Render(J::object(), options);
}

void ExpectFails(const std::string& source, const std::string& words, const RenderOptions& options = {}) {
  auto r = RenderSource(source, options);
  ASSERT_FALSE(r.ok()) << source.substr(0, 200) << " rendered " << r->substr(0, 100);
  EXPECT_NE(r.status().message().find(words), std::string::npos)
      << source.substr(0, 200) << " -> " << r.status().ToString();
}

TEST(JinjaLimits, IntegerResultsOutside64BitsAreErrors) {
  const char* cases[] = {
      "{{ (-9223372036854775807 - 1) // -1 }}",  // SIGFPE in hardware
      "{{ 9223372036854775807 + 1 }}",
      "{{ -9223372036854775807 - 2 }}",
      "{{ 4611686018427387904 * 2 }}",
      "{{ 2 ** 63 }}",
      "{{ 3 ** 40 }}",
      "{{ (-3) ** 9223372036854775807 }}",
      "{{ -(-9223372036854775807 - 1) }}",
      "{{ (-9223372036854775807 - 1) | abs }}",
      "{{ 1e300 | int }}",
      "{{ '1e300' | int }}",
      "{{ '%d' % 1e300 }}",
      "{{ 1e300 is divisibleby(7) }}",
  };
  for (const char* source : cases) ExpectFails(source, "integer overflow");
}

TEST(JinjaLimits, ModuloByMinusOneIsZero) {
  // INT64_MIN % -1 traps in hardware; Python says 0.
  auto r = RenderSource("{{ (-9223372036854775807 - 1) % -1 }} {{ (-9223372036854775807 - 1) is divisibleby(-1) }}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "0 True");
}

TEST(JinjaLimits, RangeAndRepeatCountsNeverOverflow) {
  ExpectFails("{{ range(-9223372036854775807 - 1, 9223372036854775807) | list }}", "Range too big");
  ExpectFails("{{ range(9223372036854775807, -9223372036854775807 - 1, -1) | list }}", "Range too big");
  ExpectFails("{{ 'ab' * 9223372036854775807 }}", "too large");
  ExpectFails("{{ [1, 2] * 9223372036854775807 }}", "too large");
  ExpectFails("{{ 'x' * 100000000000 }}", "too large");
}

RenderOptions WithBudget(size_t bytes) {
  RenderOptions options;
  options.limits.max_memory_bytes = bytes;
  return options;
}

// Each of these held gigabytes (or the whole machine) before it failed;
// under a 16 MiB budget each must fail at the budget.
TEST(JinjaLimits, GrowingValuesFailAtTheMemoryBudget) {
  const RenderOptions small = WithBudget(16u << 20);
  const char* cases[] = {
      // A list that doubles in a loop (no output at all).
      "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
      // A string that doubles.
      "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      // Shared halves: small in memory, exponential when printed.
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson }}",
      "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | string | length }}",
      // Many values of a bounded size, held at once by macro frames.
      "{% macro f(n) %}{% set s = 'x' * 1000000 %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(100) }}",
      // Copies of one string in a list.
      "{% set s = 'x' * 1000000 %}{% set l = [s] * 100 %}",
      // Builders.
      "{{ [[1]] | tojson(indent=1000000000) }}",
      "{% set s = 'x' * 1000000 %}{{ ([s] * 10) | join(s) }}",
      "{% set s = 'x' * 4000000 %}{{ '%s%s%s%s%s' % (s, s, s, s, s) }}",
      "{% set s = 'x' * 4000000 %}{{ '{}{}{}{}{}'.format(s, s, s, s, s) }}",
      "{{ 'x' | center(1000000000000000) }}",
      "{{ 'x'.ljust(1000000000000000) }}",
      "{{ 'x'.zfill(1000000000000000) }}",
      "{{ 'x\ny' | indent(1000000000000000, true) }}",
      "{% set s = 'x' * 1000000 %}{{ s | replace('x', s) }}",
  };
  for (const char* source : cases) {
    auto start = std::chrono::steady_clock::now();
    ExpectFails(source, "too large", small);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0) << source;
  }
  // The same under the default budget: a clear error, not the OOM killer.
  ExpectFails(cases[0], "too large");
  ExpectFails("{{ 'x' * 1000 | center(100000000000) }}", "too large");
}

TEST(JinjaLimits, OutputCountsAgainstTheBudget) {
  RenderOptions options = WithBudget(1u << 20);
  ExpectFails("{% for i in range(100000) %}0123456789{% endfor %}", "too large", options);
  // A budget is not a leak: a render can use it again and again.
  auto r = RenderSource("{% for i in range(100) %}{% set s = 'x' * 50000 %}{{ s | length }}{% endfor %}", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 500u);
  // The output limit proper still holds on its own.
  RenderOptions out_limit;
  out_limit.limits.max_output_bytes = 1000;
  ExpectFails("{{ 'x' * 2000 }}", "output exceeds", out_limit);
}

// Recursion is bounded by the native stack the render has used, not only
// by counts: frame sizes differ between builds (an ASan build overflowed an
// 8 MiB stack within the default counts). Run on a 1 MiB thread with the
// counts lifted, a recursive macro must fail cleanly at the stack budget.
TEST(JinjaLimits, RecursionStopsAtTheStackBudget) {
  struct Job {
    Result<std::string> result = std::string();
  } job;
  auto run = [](void* arg) -> void* {
    RenderOptions options;
    options.limits.max_call_depth = 1000000;
    options.limits.max_eval_depth = 1000000;
    options.limits.max_stack_bytes = 256u << 10;
    static_cast<Job*>(arg)->result =
        RenderSource("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", options);
    return nullptr;
  };
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 1u << 20), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, run, &job), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_FALSE(job.result.ok());
  EXPECT_NE(job.result.status().message().find("nested too deeply"), std::string::npos) << job.result.status().ToString();
}

TEST(JinjaLimits, FilterChainsAndOperatorChainsHaveANestingLimit) {
  // A million filters built a tree a million levels deep that crashed when
  // destroyed; the other chains built the same kind of tree.
  std::string filters = "{{ x", sums = "{{ 1", attrs = "{{ x", conds = "{{ 1", elifs = "{% if x %}";
  for (int k = 0; k < 1000000; ++k) filters += "|string";
  for (int k = 0; k < 100000; ++k) {
    sums += "+1";
    attrs += ".a";
    conds += " if x";
    elifs += "{% elif x %}";
  }
  for (std::string* s : {&filters, &sums, &attrs, &conds}) *s += " }}";
  elifs += "{% endif %}";
  for (const std::string* s : {&filters, &sums, &attrs, &conds, &elifs}) {
    auto t = Template::Parse(*s);
    ASSERT_FALSE(t.ok()) << s->substr(0, 40);
    EXPECT_NE(t.status().message().find("nested too deeply"), std::string::npos) << t.status().ToString();
  }
  // Chains of a length real templates use still parse and render.
  std::string chain = "{{ 'a'";
  for (int k = 0; k < 50; ++k) chain += " ~ 'b' | upper | lower";
  chain += " }}";
  auto ok = RenderSource(chain);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->size(), 51u);
}

TEST(JinjaLimits, DeeplyNestedValuesAreDestroyedWithoutRecursion) {
  // 300,000 levels: a recursive destructor needs far more than a thread's stack.
  const char* source =
      "{% set ns = namespace(x=[]) %}{% for i in range(300) %}{% for j in range(1000) %}"
      "{% set ns.x = [ns.x] %}{% endfor %}{% endfor %}done";
  auto t = Template::Parse(source);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto r = t->Render(J::object());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "done");
  // Python compares an item with itself by identity first.
  auto same = RenderSource(std::string(source).replace(std::string(source).find("done"), 4, "{{ ns.x == ns.x }}"));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, "True");
  // Walks over such a value stop at a depth limit instead of the stack's end.
  for (const char* use : {"{{ ns.x == [ns.x] }}", "{{ [ns.x] < ns.x }}", "{{ ns.x }}", "{{ ns.x | tojson }}",
                          "{{ ns.x in [[ns.x]] }}"}) {
    std::string deep = "{% set ns = namespace(x=[]) %}{% for i in range(20000) %}{% set ns.x = [ns.x] %}{% endfor %}";
    ExpectFails(deep + use, "recursion");
  }
}

}  // namespace
}  // namespace lineage::jinja
