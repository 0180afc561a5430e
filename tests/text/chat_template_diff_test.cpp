// Differential test: every real chat template in LINEAGE_SHARED_DATA/templates,
// rendered for every generated chat case, must equal byte for byte what
// Debian's python3-jinja2 renders in transformers' environment
// (tests/text/jinja_reference.py). Where the reference raises, we must fail
// too. The reference runs once per test binary over the whole batch.
#include <gtest/gtest.h>

#include <cstdio>

#include "chat_cases.h"
#include "jinja_reference.h"
#include "text/chat_template.h"

namespace lineage {
namespace {

using J = nlohmann::ordered_json;

const char kBos[] = "<s>";
const char kEos[] = "</s>";

struct Reference {
  bool available = false;
  std::string why_not;
  J results;  // template -> case -> {"ok": text} | {"error": message}
};

// The reference renders only the template under test: ctest runs each test
// in its own process, so one batch per template keeps the suite fast.
Reference GetReference(const std::string& name, const std::string& source) {
  Reference r;
  r.why_not = testing::ReferenceUnavailableReason();
  if (!r.why_not.empty()) return r;
  J request;
  std::tm now = testing::FixedNow();
  request["now"] = {now.tm_year + 1900, now.tm_mon + 1, now.tm_mday, now.tm_hour, now.tm_min, now.tm_sec};
  request["templates"] = {{name, source}};
  request["cases"] = J::array();
  for (const auto& c : testing::MakeChatCases()) {
    request["cases"].push_back({{"name", c.name},
                                {"messages", c.request.messages},
                                {"tools", c.request.tools},
                                {"add_generation_prompt", c.request.add_generation_prompt},
                                {"bos_token", kBos},
                                {"eos_token", kEos},
                                {"extra", c.request.extra}});
  }
  auto out = testing::RunReference(request);
  if (!out.ok()) {
    r.why_not = out.status().ToString();
    return r;
  }
  r.results = std::move(out).value();
  r.available = true;
  return r;
}

std::string ShowDiff(const std::string& want, const std::string& got) {
  size_t n = CommonPrefixBytes(want, got);
  size_t from = n > 60 ? n - 60 : 0;
  return "first difference at byte " + std::to_string(n) + "\n  want: ..." + J(want.substr(from, 120)).dump() +
         "\n  got:  ..." + J(got.substr(from, 120)).dump();
}

class TemplateDiff : public ::testing::TestWithParam<std::string> {};

TEST_P(TemplateDiff, MatchesPythonJinja2) {
  const std::string name = GetParam();
  auto templates = testing::LoadRealTemplates();
  if (templates.empty()) GTEST_SKIP() << "no templates under " << testing::RealTemplateDir();
  const Reference ref = GetReference(name, templates.at(name));
  if (!ref.available) GTEST_SKIP() << ref.why_not;
  auto ct = ChatTemplate::Create(templates.at(name), kBos, kEos);
  const J& expected = ref.results.at(name);
  int passed = 0, total = 0, ref_errors = 0;
  for (const auto& c : testing::MakeChatCases()) {
    ++total;
    const J& want = expected.at(c.name);
    if (!ct.ok()) {
      EXPECT_TRUE(want.contains("error")) << c.name << ": we fail to parse: " << ct.status().ToString();
      passed += want.contains("error") ? 1 : 0;
      continue;
    }
    ChatTemplate t = *ct;
    t.set_now(testing::FixedNow());
    auto got = t.Apply(c.request);
    if (want.contains("error")) {
      ++ref_errors;
      const std::string ref_error = want["error"].get<std::string>();
      if (got.ok()) {
        ADD_FAILURE() << c.name << ": reference raised (" << ref_error << ") but we rendered:\n" << *got;
        continue;
      }
      const std::string fragment = testing::ExpectedErrorFragment(ref_error);
      bool same = got.status().message().find(fragment) != std::string::npos;
      EXPECT_TRUE(same) << c.name << ": reference raised " << ref_error << "\n  we: " << got.status().ToString();
      passed += same ? 1 : 0;
      continue;
    }
    const std::string& text = want["ok"].get_ref<const std::string&>();
    if (!got.ok()) {
      ADD_FAILURE() << c.name << ": reference rendered but we failed: " << got.status().ToString();
      continue;
    }
    EXPECT_TRUE(*got == text) << c.name << ": " << ShowDiff(text, *got);
    passed += *got == text ? 1 : 0;
  }
  std::printf("[ diff ] %-45s %3d/%3d cases agree (%d where both raise)\n", name.c_str(), passed, total, ref_errors);
}

std::vector<std::string> TemplateNames() {
  std::vector<std::string> names;
  for (const auto& [name, src] : testing::LoadRealTemplates()) names.push_back(name);
  if (names.empty()) names.push_back("none-found");
  return names;
}

INSTANTIATE_TEST_SUITE_P(RealTemplates, TemplateDiff, ::testing::ValuesIn(TemplateNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace lineage
