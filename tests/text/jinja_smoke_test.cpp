#include <gtest/gtest.h>

#include "text/jinja/template.h"

namespace lineage::jinja {
namespace {

TEST(JinjaSmoke, Renders) {
  auto t = Template::Parse("Hello {{ name }}!");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto r = t->Render({{"name", "world"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "Hello world!");
}

}  // namespace
}  // namespace lineage::jinja
