// The interpreter, construct by construct, against python3-jinja2: each
// snippet is rendered by both (one batch through jinja_reference.py) and
// must agree byte for byte, or both must fail for the same class of reason.
#include <gtest/gtest.h>

#include "chat_cases.h"
#include "jinja_reference.h"
#include "text/jinja/template.h"

namespace lineage::jinja {
namespace {

using J = nlohmann::ordered_json;

struct Snippet {
  const char* source;
  const char* context;  // JSON object
};

const J kData = J::parse(R"({
  "msgs": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
           {"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
           {"role": "user", "content": "  bye  "}],
  "d": {"b": 2, "a": 1, "items": "shadow", "nested": {"x": [1, 2.5, null, true, "s"]}},
  "s": "Hello, Wörld! 世界",
  "n": 7, "f": 2.5, "neg": -3, "big": 12345678901234, "t": true, "z": null,
  "l": [3, 1, 2], "words": ["b", "A", "c", "a"], "empty": [], "es": ""
})");

const Snippet kSnippets[] = {
    // Output and whitespace control.
    {"a {{ s }} b", "{}"},
    {"  {% if t %}\n    x\n  {% endif %}\n  y", "{}"},
    {"line1\n  {%- if t %} x {% endif -%}  \n  line2", "{}"},
    {"{% if t -%}\n\n   a   \n{%- endif %}|", "{}"},
    {"a\n{# comment #}\nb\n  {#- c -#}  \nc", "{}"},
    {"  {%+ if t %}kept{% endif %}\n", "{}"},
    {"{{- '  x  ' -}}  \n  {{ 'y' }}\n", "{}"},
    {"{% raw %}{{ not parsed }}{% endraw %}\n  {% raw -%}  x  {%- endraw %}", "{}"},
    {"a\r\nb\rc\n", "{}"},
    {"x\u00a0 {%- if t -%} \u2003\u00a0y {%- endif %}\u00a0z", "{}"},
    {"{% for i in l %}\n  {{ i }}\n{% endfor %}\n", "{}"},
    // Printing Python values.
    {"{{ n }} {{ f }} {{ neg }} {{ big }} {{ t }} {{ z }} {{ l }} {{ d }} {{ undefined_name }}|", "{}"},
    {"{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1.5e-7 }} {{ 10 / 4 }} {{ 3 / 3 }} {{ 2 ** 40 / 1 }}", "{}"},
    {"{{ ('a', 1) }} {{ ('x',) }} {{ [\"it's\", 'say \"hi\"', 'both \\' \"'] }} {{ ['\\n\\t\\\\'] }}", "{}"},
    {"{{ {'k': [1, {'z': none}], 'u': 'é'} }} {{ [1.0, -0.0, true] }}", "{}"},
    // Operators.
    {"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }}", "{}"},
    {"{{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [1] * 2 }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 1 + 2.5 }} {{ true + 1 }}", "{}"},
    {"{{ 'a' ~ 1 ~ none ~ undefined_name ~ [1] }}", "{}"},
    {"{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ 'x' != 'y' }} {{ 1 <= 1 >= 0 }}", "{}"},
    {"{{ 'ell' in s }} {{ 'b' in d }} {{ 2 in l }} {{ 5 not in l }} {{ 'q' in undefined_name }}", "{}"},
    {"{{ not t }} {{ t and n }} {{ z or 'dflt' }} {{ es or empty or 0 }} {{ n and f and 'last' }}", "{}"},
    {"{{ -n }} {{ +f }} {{ -(-n) }} {{ - 2 ** 2 }} {{ (1, 2) == (1, 2) }} {{ [1, 2] == (1, 2) }}", "{}"},
    {"{{ 'yes' if t else 'no' }} {{ 'yes' if z else 'no' }} [{{ 'only' if z }}] {{ 1 if z else 2 if t else 3 }}", "{}"},
    {"{{ d == {'b': 2, 'a': 1, 'items': 'shadow', 'nested': d.nested} }} {{ msgs[0] == msgs[0] }}", "{}"},
    // Subscripts and slices.
    {"{{ l[0] }} {{ l[-1] }} {{ l[5] }}| {{ s[0] }} {{ s[-1] }} {{ s[7] }} {{ d['a'] }} {{ d.b }} {{ d.nested.x[1] }} {{ l.0 }}", "{}"},
    {"{{ l[::-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[::2] }} {{ l[-2::-1] }} {{ l[10:] }} {{ l[1:2:3] }}", "{}"},
    {"{{ s[::-1] }} {{ s[-2:] }} {{ s[3:8] }} {{ s[::3] }} {{ msgs[1:][0].content }} {{ msgs[:-1] | length }}", "{}"},
    {"{{ d.items is callable }}|{{ d['items'] }}|{{ d.missing }}|{{ d['get'] is defined }}|{{ l.missing is defined }}", "{}"},
    {"{{ z.attr }}|{{ n.nosuch }}|{{ z['k'] }}|", "{}"},
    // Tests.
    {"{{ n is number }} {{ f is float }} {{ n is integer }} {{ t is integer }} {{ t is boolean }} {{ s is string }} {{ l is sequence }}", "{}"},
    {"{{ d is mapping }} {{ l is mapping }} {{ s is iterable }} {{ n is iterable }} {{ undefined_name is iterable }} {{ d is sequence }}", "{}"},
    {"{{ z is none }} {{ undefined_name is defined }} {{ undefined_name is undefined }} {{ t is true }} {{ 1 is true }} {{ t is false }}", "{}"},
    {"{{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ n is eq 7 }} {{ n is equalto(7) }} {{ n is gt 3 }} {{ n is lt 3 }}", "{}"},
    {"{{ 2 is in l }} {{ 's' is lower }} {{ 'S' is upper }} {{ n is not none }} {{ raise_exception is callable }} {{ l is sameas l }}", "{}"},
    {"{{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'defined' is test }}", "{}"},
    // Filters.
    {"{{ d | tojson }} {{ l | tojson(indent=2) }} {{ d | tojson(sort_keys=true) }} {{ s | tojson }} {{ s | tojson(ensure_ascii=true) }}", "{}"},
    {"{{ {'a': [1, {'b': null}], 'c': {}} | tojson(indent=4) }}|{{ [] | tojson(indent=2) }}|{{ d | tojson(separators=(',', ':')) }}", "{}"},
    {"{{ [1.0, 1e20, -0.5, 3] | tojson }} {{ 'tab\\there \"q\" \\\\ \\u0001 \\u007f' | tojson }}", "{}"},
    {"{{ '  x y  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ s | length }} {{ l | count }} {{ d | length }} {{ undefined_name | length }}", "{}"},
    {"{{ d | items | list }} {% for k, v in d | items %}{{ k }}={{ v }};{% endfor %} {{ undefined_name | items | list }}", "{}"},
    {"{{ l | join(', ') }} {{ words | join }} {{ msgs | join('|', attribute='role') }} {{ s | list | join('.') }}", "{}"},
    {"{{ s | replace('l', 'L') }} {{ s | replace('l', 'L', 1) }} {{ s | upper }} {{ s | lower }} {{ 'hello world-foo' | title }} {{ 'hELLO' | capitalize }}", "{}"},
    {"{{ l | first }} {{ l | last }} {{ s | first }} {{ d | first }} {{ empty | first }}| {{ undefined_name | last }}|", "{}"},
    {"{{ msgs | map(attribute='role') | list }} {{ words | map('upper') | join }} {{ msgs | map(attribute='name', default='?') | list }}", "{}"},
    {"{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ msgs | rejectattr('tool_calls') | list | length }}", "{}"},
    {"{{ l | select('odd') | list }} {{ l | reject('odd') | list }} {{ [0, 1, '', 'a', none] | select | list }} {{ msgs | selectattr('tool_calls', 'defined') | list | length }}", "{}"},
    {"{{ undefined_name | default('d') }} {{ z | default('d') }} {{ es | default('d', true) }} {{ n | d(1) }}", "{}"},
    {"{{ n | string }} {{ l | string }} {{ z | string }} {{ '42' | int + 1 }} {{ '4.7' | int }} {{ 'x' | int(9) }} {{ 3.9 | int }} {{ '0x1f' | int(0, 16) }} {{ '2.5' | float }}", "{}"},
    {"{{ words | sort }} {{ words | sort(case_sensitive=true) }} {{ l | sort(reverse=true) }} {{ msgs | sort(attribute='role') | map(attribute='role') | join(',') }}", "{}"},
    {"{{ words | unique | list }} {{ l | max }} {{ words | min }} {{ l | sum }} {{ [1.5, 2] | sum }} {{ l | reverse | list }} {{ s | reverse }}", "{}"},
    {"{{ -2.5 | abs }} {{ neg | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.567 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ d | dictsort }}", "{}"},
    {"{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(4, true) }}|{{ '<b>&' | escape }}|{{ ('<i>' | safe) + '<u>' }}|{{ '<x>' ~ ('<y>' | safe) }}", "{}"},
    {"{{ 'one two  three' | wordcount }} {{ 'ab' | center(6) }}|{{ d | attr('b') }}", "{}"},
    // String, dict and list methods.
    {"{{ s.startswith('Hell') }} {{ s.endswith(('x', '界')) }} {{ s.split(', ') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }}", "{}"},
    {"{{ '\\n\\nx\\n'.lstrip('\\n') }}|{{ 'x..'.rstrip('.') }}|{{ '  y '.strip() }}|{{ s.upper() }}|{{ s.lower() }}|{{ 'ab cd'.title() }}|{{ s.find('W') }}|{{ s.count('l') }}", "{}"},
    {"{{ '-'.join(words) }} {{ s.replace('l', '') }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ 'a\\nb'.splitlines() }} {{ 'ab'.zfill(4) }}", "{}"},
    {"{{ d.get('a') }} {{ d.get('q') }} {{ d.get('q', 5) }} {{ d.keys() | list }} {{ d.values() | list | length }} {{ d.items() | first }}", "{}"},
    {"{{ l.index(2) }} {{ l.count(3) }} {{ msgs[2].tool_calls[0].function.arguments.a }}", "{}"},
    {"{{ s.split('</think>')[-1].lstrip('\\n') }} {{ 'a</think>\\n\\nb'.split('</think>')[0].rstrip('\\n').split('<think>')[-1] }}", "{}"},
    // Statements.
    {"{% set x = 1 %}{% set y, z2 = [2, 3] %}{{ x }}{{ y }}{{ z2 }}{% set x = x + 10 %}{{ x }}", "{}"},
    {"{% set b %}inner {{ n }}{% endset %}[{{ b }}]{% set c | upper %}shout{% endset %}{{ c }}", "{}"},
    {"{% if n > 10 %}a{% elif n > 5 %}b{% elif n > 1 %}c{% else %}d{% endif %}", "{}"},
    {"{% for m in msgs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}", "{}"},
    {"{% for m in msgs %}[{{ loop.previtem.role if loop.previtem is defined else '-' }}>{{ loop.nextitem.role if loop.nextitem else '-' }}]{% endfor %}", "{}"},
    {"{% for i in empty %}x{% else %}empty!{% endfor %} {% for i in l if i > 1 %}{{ i }}:{{ loop.index }}{% else %}none{% endfor %}", "{}"},
    {"{% for i in l %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}", "{}"},
    {"{% for k in d %}{{ k }},{% endfor %} {% for c in 'héy' %}{{ c }}.{% endfor %} {% for a, b in [(1, 2), [3, 4]] %}{{ a + b }}{% endfor %}", "{}"},
    {"{% for i in range(3) %}{% for j in range(i) %}{{ loop.index }}{{ loop.cycle('a', 'b') }}{% endfor %}|{% endfor %} {{ range(10, 0, -3) | list }}", "{}"},
    {"{% set x = 'outer' %}{% for i in l %}{% set x = i %}{% endfor %}{{ x }} {% if t %}{% set y = 'if-scope' %}{% endif %}{{ y }}", "{}"},
    {"{% set ns = namespace(total=0, names=[]) %}{% for i in l %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }} {{ ns.names }}", "{}"},
    {"{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }} {{ greet() }}", "{}"},
    {"{% macro m(x) %} {{ x }} {% endmacro %}[{{ m(1) | trim }}] {{ m('y') | length }}", "{}"},
    {"{% set g = 'global' %}{% macro show() %}{{ g }}/{{ n }}{% endmacro %}{% set g = 'changed' %}{{ show() }}{% for n in [1] %}{{ show() }}{% endfor %}", "{}"},
    {"{% macro rec(k) %}{{ k }}{% if k > 0 %}{{ rec(k - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}", "{}"},
    {"{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}body {{ n }}{% endcall %}", "{}"},
    {"{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) each(l) %}[{{ x * 2 }}]{% endcall %}", "{}"},
    {"{% filter upper %}shout {{ s }}{% endfilter %} {% filter replace('a', 'b') | upper %}banana{% endfilter %}", "{}"},
    {"{{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %d %b') }}", "{}"},
    {"{{ dict(a=1, b='x') }} {{ namespace(a=1).a }} {{ namespace(d).b }}", "{}"},
    {"{% set x = [1, 2] %}{{ x + [3] }} {% set t2 = (1,) %}{{ t2 }}", "{}"},
    {"{% with a = n, b = n + 1 %}{{ a }}{{ b }}{% set c = 1 %}{% endwith %}[{{ a }}{{ c }}]{% with %}x{% endwith %}", "{}"},
    {"{% for m in msgs %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% set g = 1 %}{% endgeneration %}{% endif %}{% endfor %}[{{ g }}]", "{}"},
    {"{% macro v(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ v(1, 2, 3, k='x') }}", "{}"},
    {"{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", "{}"},
    {"{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, b=2) }}", "{}"},
    {"{% macro m(a) %}{{ a }}{% endmacro %}{% call m(1) %}body{% endcall %}", "{}"},
    // String formatting.
    {"{{ '%s and %s' % ('a', 1) }}|{{ '%d%%' % 42 }}|{{ '%5.2f|%-6s|%06d|%x|%X|%o|%e' % (3.14159, 'ab', -42, 255, -255, 8, 12345.678) }}", "{}"},
    {"{{ '%(name)s is %(age)d' % {'name': 'Ann', 'age': 30} }}|{{ '%r %s' % ('q', none) }}|{{ '%s' % [1, 'x'] }}|{{ '%c%c' % (72, 'i') }}", "{}"},
    {"{{ '%s - %s' | format('a', 'b') }}|{{ '%(x)s' | format(x=5) }}|{{ '%.3s|%*d' % ('abcdef', 5, 42) }}|{{ '%g %g' % (0.0001, 1e20) }}", "{}"},
    {"{{ '{} + {} = {}'.format(1, 2.5, 'x') }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{name}!'.format(name='N') }}|{{ '{{}} {:>6}|{:<4}|{:^7}|'.format('r', 'l', 'c') }}", "{}"},
    {"{{ '{:05d}|{:.2f}|{:+d}|{:x}|{!r}|{:*^9}'.format(-42, 2.345, 7, 255, 'q', 'mid') }}", "{}"},
    {"{{ '%s %s' % ('only one',) }}", "{}"},
    {"{{ '%s' % ('a', 'b') }}", "{}"},
    {"{{ '%d' % 'x' }}", "{}"},
    {"{{ '{} {}'.format(1) }}", "{}"},
    // Errors: both must fail for the same class of reason.
    {"{{ raise_exception('Custom failure: ' ~ n) }}", "{}"},
    {"{{ undefined_name.attr }}", "{}"},
    {"{{ undefined_name['k'] }}", "{}"},
    {"{{ undefined_name + 1 }}", "{}"},
    {"{{ undefined_name() }}", "{}"},
    {"{{ 'a' + 1 }}", "{}"},
    {"{{ 1 / 0 }}", "{}"},
    {"{{ 5 // 0 }}", "{}"},
    {"{{ 1 < 'a' }}", "{}"},
    {"{{ z | tojson }}{{ undefined_name | tojson }}", "{}"},
    {"{{ 1 in 5 }}", "{}"},
    {"{{ n | items | list }}", "{}"},
    {"{% for x in n %}{% endfor %}", "{}"},
    {"{% for a, b in [[1, 2, 3]] %}{% endfor %}", "{}"},
    {"{% set x = 1 %}{% set x.y = 2 %}", "{}"},
    {"{{ l.append(4) }}", "{}"},
    {"{{ d.update({'q': 1}) }}", "{}"},
    {"{% set q = namespace(ids=[]) %}{% set _ = q.ids.append(1) %}", "{}"},
    {"{{ range(1000000) | length }}", "{}"},
    // 64-bit integers where Python's result fits: no trap, no wrap.
    {"{{ -9223372036854775807 // -1 }} {{ (-9223372036854775807 - 1) % -1 }} {{ 7 % -1 }} {{ -7 // -1 }} {{ 0 // -1 }}", "{}"},
    {"{{ (-1) ** 3 }} {{ (-1) ** 4 }} {{ (-2) ** 63 }} {{ 3 ** 39 }} {{ 0 ** 0 }} {{ 1 ** 9223372036854775807 }} {{ (-1) ** 9223372036854775807 }} {{ 0 ** 9223372036854775807 }}", "{}"},
    {"{{ 0 ** -1 }}", "{}"},
    {"{{ 0.0 ** -1 }}", "{}"},
    {"{{ range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904) | list }}", "{}"},
    {"{{ range(0, 10, -9223372036854775807 - 1) | list }} {{ range(9223372036854775807, 0, -9223372036854775807 - 1) | list }} {{ range(9223372036854775807, 9223372036854775806, -1) | list }}", "{}"},
    {"{{ range(-9223372036854775807 - 1, 9223372036854775807) | length }}", "{}"},
    {"{{ 'abc'[1::9223372036854775807] }} {{ [1, 2, 3][::-9223372036854775807 - 1] }} {{ 'abc'[-9223372036854775807 - 1:9223372036854775807] }} {{ [1, 2, 3][9223372036854775807::-2] }}", "{}"},
    {"{{ 6 is divisibleby(-1) }} {{ (-9223372036854775807 - 1) is divisibleby(-1) }} {{ 7 is divisibleby 2 }}", "{}"},
    {"[{{ 'x' * 0 }}{{ '' * 9223372036854775807 }}{{ 'ab' * -9223372036854775807 }}] {{ [] * 9223372036854775807 }} {{ [1] * -5 }}", "{}"},
    {"{{ '%*d|%-*d|%.*f' % (5, 3, 4, 2, 2, 3.14159) }} {{ '%*d' % (-5, 3) }}|", "{}"},
    {"{{ '%c' % 1114112 }}", "{}"},
    {"{{ 'x'.ljust(5, '') }}", "{}"},
    {"{{ 'x'.center(9, 'ab') }}", "{}"},
    {"{{ s.nosuchmethod() }}", "{}"},
    {"{{ d.a.b.c }}", "{}"},
    {"{{ l[undefined_name] }}", "{}"},
};

const Snippet kMutationSnippets[] = {
    {"{% set ns = namespace(ids=[]) %}{% set _ = ns.ids.append(1) %}{% set _ = ns.ids.append('x') %}{{ ns.ids }} {{ ns.ids.pop(0) }} {{ ns.ids }}", "{}"},
    {"{% set q = [3, 1, 2] %}{{ q.sort() }}{{ q }} {{ q.reverse() }}{{ q }} {{ q.insert(1, 9) }}{{ q }} {{ q.extend('ab') }}{{ q }}", "{}"},
    {"{% set q = [1, 2, 1] %}{{ q.remove(1) }}{{ q }} {{ q.pop() }} {{ q.clear() }}{{ q }}", "{}"},
    {"{% set m = {'a': 1} %}{{ m.update({'b': 2}) }}{{ m }} {{ m.setdefault('c', 3) }} {{ m.pop('a') }} {{ m.pop('z', 'dflt') }} {{ m }} {{ m.popitem() }}", "{}"},
    {"{% set q = [] %}{{ q.pop() }}", "{}"},
    {"{% set q = [1] %}{{ q.remove(5) }}", "{}"},
    {"{{ l.append(4) }}{{ l }}", "{}"},
    {"{% for m in msgs %}{% set _ = m.update({'seen': loop.index}) %}{% endfor %}{{ msgs | map(attribute='seen') | list }}", "{}"},
};

void CheckSnippets(const std::vector<Snippet>& snippets, bool allow_mutation) {
  std::string why = testing::ReferenceUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  J request;
  std::tm now = testing::FixedNow();
  request["now"] = {now.tm_year + 1900, now.tm_mon + 1, now.tm_mday, now.tm_hour, now.tm_min, now.tm_sec};
  request["snippets"] = J::array();
  request["mutable"] = allow_mutation;
  std::vector<J> contexts;
  for (const Snippet& s : snippets) {
    J ctx = kData;
    const J extra = J::parse(s.context);
    for (auto it = extra.begin(); it != extra.end(); ++it) ctx[it.key()] = it.value();
    contexts.push_back(ctx);
    request["snippets"].push_back({{"source", s.source}, {"context", ctx}});
  }
  auto ref = testing::RunReference(request);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_TRUE(ref->is_array() && ref->size() == snippets.size()) << ref->dump().substr(0, 2000);
  RenderOptions options;
  options.now = now;
  options.allow_mutation = allow_mutation;
  size_t agree = 0;
  for (size_t k = 0; k < snippets.size(); ++k) {
    const J& want = (*ref)[k];
    const char* src = snippets[k].source;
    auto t = Template::Parse(src);
    Result<std::string> got = t.ok() ? t->Render(contexts[k], options) : Result<std::string>(t.status());
    if (want.contains("error")) {
      std::string fragment = testing::ExpectedErrorFragment(want["error"].get<std::string>());
      bool ok = !got.ok() && got.status().message().find(fragment) != std::string::npos;
      EXPECT_TRUE(ok) << "snippet: " << src << "\n  reference: " << want["error"].get<std::string>()
                      << "\n  we: " << (got.ok() ? "rendered " + J(*got).dump() : got.status().ToString());
      agree += ok;
    } else {
      bool ok = got.ok() && *got == want["ok"].get<std::string>();
      EXPECT_TRUE(ok) << "snippet: " << src << "\n  reference: " << want["ok"].dump()
                      << "\n  we:        " << (got.ok() ? J(*got).dump() : got.status().ToString());
      agree += ok;
    }
  }
  std::printf("[ snippets ] %zu/%zu agree with python3-jinja2%s\n", agree, snippets.size(), allow_mutation ? " (mutation allowed)" : "");
}


TEST(JinjaSnippets, AgreeWithPythonJinja2) {
  CheckSnippets(std::vector<Snippet>(std::begin(kSnippets), std::end(kSnippets)), false);
}

TEST(JinjaSnippets, MutationAgreesWithSandboxedEnvironment) {
  CheckSnippets(std::vector<Snippet>(std::begin(kMutationSnippets), std::end(kMutationSnippets)), true);
}

}  // namespace
}  // namespace lineage::jinja
